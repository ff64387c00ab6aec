// The parts of a benchmark run each in a process of its own (the database, the service, the load generator), so
// that each one's CPU is its own (bench/process-cpu.ts): starting a TypeScript entry, reading its lines, stopping it.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

/**
 * Spawns a TypeScript entry; answers the process, the first line of its standard output matching `ready`, and a
 * reader of the lines after it.
 */
export async function startProcess(
  entry: string,
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  nodeArgs: string[] = [],
): Promise<{ child: ChildProcess; line: string; nextLine: () => Promise<string> }> {
  const child = spawn(process.execPath, [...nodeArgs, "--import", "tsx", join(root, entry), ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines: string[] = [];
  const readers: ((line: string) => void)[] = [];
  createInterface({ input: child.stdout! }).on("line", (l) => {
    const reader = readers.shift();
    if (reader) reader(l);
    else lines.push(l);
  });
  const nextLine = () => {
    const waiting = lines.shift();
    return waiting !== undefined ? Promise.resolve(waiting) : new Promise<string>((resolve) => readers.push(resolve));
  };
  const exited = new Promise<never>((_, reject) => child.once("exit", (code) => reject(new Error(`${entry} exited (${code}) before it was ready`))));
  exited.catch(() => {});
  let line = await Promise.race([nextLine(), exited]);
  while (!ready.test(line)) line = await Promise.race([nextLine(), exited]);
  return { child, line, nextLine };
}

/** Ends a process started with `startProcess` by closing its standard input, as the bench's services expect. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.stdin!.end();
  await exited;
}

/** Runs an entry that prints its result as one JSON line and exits; answers that result once its output has ended. */
export async function runToCompletion<T>(
  entry: string,
  args: string[],
  env: Record<string, string> = {},
  nodeArgs: readonly string[] = [],
): Promise<T> {
  const child = spawn(process.execPath, [...nodeArgs, "--import", "tsx", join(root, entry), ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  const line = output.split("\n").find((l) => l.startsWith("{"));
  if (code !== 0 || line === undefined) throw new Error(`${entry} exited (${code}) without a result`);
  return JSON.parse(line) as T;
}

/** Extra node options for one part, from an environment variable (for example --cpu-prof, to see where time goes). */
export function nodeArgsFrom(variable: string): string[] {
  return process.env[variable]?.split(" ").filter(Boolean) ?? [];
}
