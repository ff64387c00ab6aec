// Svc and its database as separate processes, for tests that kill one with SIGKILL and start it again.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { captureProcessOutput } from "./log-capture.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

export interface RunningProcess {
  process: ChildProcess;
  output: string[];
  /** Sends `signal` and waits for the process to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

function startProcess(args: string[], env: Record<string, string>, ready: RegExp, timeoutMs = 20_000): Promise<{ running: RunningProcess; match: RegExpMatchArray }> {
  const child = spawn(process.execPath, ["--import", "tsx", ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  const running: RunningProcess = {
    process: child,
    output,
    async kill(signal = "SIGTERM") {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill(signal);
      await exited;
    },
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${args.join(" ")} did not start:\n${output.join("\n")}`));
    }, timeoutMs);
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on("line", (line) => {
        output.push(line);
        // JSON lines are the service's logs; the startup banner (which shows new keys once) is not.
        if (line.startsWith("{")) captureProcessOutput([line]);
        const match = ready.exec(line);
        if (match) {
          clearTimeout(timer);
          resolve({ running, match });
        }
      });
    }
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(" ")} exited (${code ?? signal}) before it was ready:\n${output.join("\n")}`));
    });
  });
}

/** The embedded MongoDB server alone, as `npm run mongo:embedded` runs it. */
export async function startDatabaseProcess(): Promise<RunningProcess & { uri: string }> {
  const { running, match } = await startProcess(["src/embedded-mongo/cli.ts", "--port", "0"], {}, /^(mongodb:\/\/\S+)/);
  return { ...running, uri: match[1]! };
}

/** `src/main.ts` against `mongodbUri`; answers once it listens, with its HTTP base URL (any role). */
export async function startServiceProcess(mongodbUri: string, env: Record<string, string> = {}): Promise<RunningProcess & { baseUrl: string }> {
  const { running, match } = await startProcess(
    ["src/main.ts"],
    { MONGODB_URI: mongodbUri, PORT: "0", GRPC_PORT: "0", SVC_BOOTSTRAP: "1", ...env },
    /health\s+(http:\/\/\S+)\/healthz/,
  );
  return { ...running, baseUrl: match[1]! };
}
