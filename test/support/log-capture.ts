// Every log line the services of the test run write, kept in memory (tests stay quiet on the console) so the
// redaction check can read them all at the end.
import { Writable } from "node:stream";
import { createLogger, type Logger } from "../../src/observability/logger.ts";

export const capturedLogLines: string[] = [];

const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const line of chunk.toString("utf8").split("\n")) if (line) capturedLogLines.push(line);
    done();
  },
});

/** A logger of the test run: info level, so request lines are captured too. */
export function testLogger(): Logger {
  return createLogger({ level: "info", destination: sink });
}

/**
 * Adds the log lines among the lines a child process wrote (services started as separate processes): a service logs
 * one JSON object per line; anything else it or another command prints (a banner, the CLI's pretty-printed JSON,
 * whose first line is a lone "{") is not a log line.
 */
export function captureProcessOutput(lines: readonly string[]): void {
  for (const line of lines) if (isLogLine(line)) capturedLogLines.push(line);
}

function isLogLine(line: string): boolean {
  if (!line.startsWith("{")) return false;
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === "object" && value !== null;
  } catch {
    return false;
  }
}
