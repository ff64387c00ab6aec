// Svc and its database as separate processes, for tests that kill one (SIGTERM, SIGKILL) and start it again,
// and the ports they listen on. The one place tests spawn processes.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import net, { type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { captureProcessOutput } from "./log-capture.ts";

export const ROOT = new URL("../..", import.meta.url).pathname;

/** Where src/ and gen/ are transpiled for the processes tests start (test/support/compiled-build.ts). */
export const COMPILED_ROOT = path.join(ROOT, ".test-build");

/**
 * The file node runs for a TypeScript entry of this repository in a process of its own: its transpiled JavaScript
 * (`src/main.ts` gives `.test-build/src/main.js`), the code tsx would run, without tsx's loader.
 */
export function compiledEntry(entry: string): string {
  return path.join(COMPILED_ROOT, entry.replace(/\.ts$/, ".js"));
}

export interface RunningProcess {
  process: ChildProcess;
  /** Every line written to standard output and standard error so far. */
  output: string[];
  /** Settles when the process has exited (at once if it already has). */
  exited: Promise<void>;
  /** Sends `signal` (SIGTERM by default) and waits for the process to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface StartOptions {
  /** Added to this process's environment; `undefined` removes a variable. */
  env?: Record<string, string | undefined>;
  /** The process counts as started once a line of its output matches. */
  ready: RegExp;
  timeoutMs?: number;
}

/** Every process spawned here that has not exited yet. */
const unfinished = new Set<ChildProcess>();

/**
 * Kills (SIGKILL) every process spawned here that is still running; answers how many. A test that timed out while
 * it started a process never gets to stop it, and one such process would keep the whole run from ending.
 */
export function killUnfinishedProcesses(): number {
  const left = [...unfinished];
  for (const child of left) {
    // Its descendants too: `npm start` runs the service as npm's grandchild, which npm's death leaves running.
    const pids = child.pid === undefined ? [] : descendantsOf(child.pid);
    child.kill("SIGKILL");
    for (const pid of pids) killIfAlive(pid);
  }
  return left.length;
}

/** Every process below `pid` (children, their children...), read from /proc; none where there is no /proc. */
function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  for (const entry of entries) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    // The command name, in parentheses, may hold spaces: the fields after its closing parenthesis are state, ppid...
    const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const pending = [pid];
  while (pending.length > 0) {
    for (const child of children.get(pending.pop()!) ?? []) {
      found.push(child);
      pending.push(child);
    }
  }
  return found;
}

function killIfAlive(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // gone already
  }
}

/**
 * Spawns `command` in the repository root with this process's environment and `env`. Without MONGODB_URI the
 * service keeps its embedded database in SVC_DATA_DIR (default .svc-data/ of the repository): unless `env` names
 * one, a fresh directory, removed once the process exits.
 */
function spawnInRoot(
  command: string,
  args: string[],
  variables: Record<string, string | undefined> = {},
): { child: ChildProcess; exited: Promise<void> } {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [name, value] of Object.entries(variables)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  const dataDir = "SVC_DATA_DIR" in variables ? null : mkdtempSync(path.join(tmpdir(), "svc-test-data-"));
  if (dataDir !== null) env.SVC_DATA_DIR = dataDir;
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  unfinished.add(child);
  const exited = new Promise<void>((resolve) =>
    child.once("exit", () => {
      unfinished.delete(child);
      if (dataDir !== null) rmSync(dataDir, { recursive: true, force: true });
      resolve();
    }),
  );
  return { child, exited };
}

/** Spawns `command` in the repository root; answers once a line of its output matches `options.ready`. */
export function startProcess(command: string, args: string[], options: StartOptions): Promise<{ running: RunningProcess; match: RegExpMatchArray }> {
  const { child, exited } = spawnInRoot(command, args, options.env);
  const output: string[] = [];
  const hasExited = () => child.exitCode !== null || child.signalCode !== null;
  const running: RunningProcess = {
    process: child,
    output,
    exited,
    async kill(signal = "SIGTERM") {
      if (hasExited()) return;
      child.kill(signal);
      await exited;
    },
  };
  const description = [command, ...args].join(" ");
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${description} did not start within ${options.timeoutMs ?? 20_000} ms:\n${output.join("\n")}`));
    }, options.timeoutMs ?? 20_000);
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on("line", (line) => {
        output.push(line);
        // JSON lines are the service's logs; the startup banner (which shows new keys once) is not.
        captureProcessOutput([line]);
        const match = options.ready.exec(line);
        if (match) {
          clearTimeout(timer);
          resolve({ running, match });
        }
      });
    }
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${description} exited (${code ?? signal}) before it was ready:\n${output.join("\n")}`));
    });
  });
}

export interface FinishedProcess {
  /** The exit code, null when a signal ended the process. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `command` in the repository root (environment as `startProcess`) until it exits, for a process that is
 * expected to stop by itself; kills it with SIGKILL and rejects after `timeoutMs`.
 */
export async function runProcess(
  command: string,
  args: string[],
  options: { env?: Record<string, string | undefined>; timeoutMs?: number } = {},
): Promise<FinishedProcess> {
  const { child, exited } = spawnInRoot(command, args, options.env);
  // "close" comes once the process has exited and its standard output and error are read to their end.
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk) => (stdout += chunk));
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const timeoutMs = options.timeoutMs ?? 30_000;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${[command, ...args].join(" ")} did not exit within ${timeoutMs} ms:\n${stdout}${stderr}`));
    }, timeoutMs);
  });
  try {
    await Promise.race([Promise.all([closed, exited]), timedOut]);
  } finally {
    clearTimeout(timer);
  }
  captureProcessOutput(`${stdout}\n${stderr}`.split("\n"));
  return { code: child.exitCode, signal: child.signalCode, stdout, stderr };
}

/** A TypeScript entry of this repository run by node (transpiled, see compiledEntry), as `npm start` runs `src/main.ts`. */
function startTypeScript(entry: string, args: string[], options: StartOptions) {
  return startProcess(process.execPath, [compiledEntry(entry), ...args], options);
}

/** `src/main.ts` run by node (transpiled) until it exits by itself (a failure to start). */
export function runMainUntilExit(env: Record<string, string | undefined>, timeoutMs?: number): Promise<FinishedProcess> {
  return runProcess(process.execPath, [compiledEntry("src/main.ts")], { env, ...(timeoutMs !== undefined ? { timeoutMs } : {}) });
}

/** The embedded MongoDB server alone, as `npm run mongo:embedded` runs it. */
export async function startDatabaseProcess(): Promise<RunningProcess & { uri: string }> {
  const { running, match } = await startTypeScript("src/embedded-mongo/cli.ts", ["--port", "0"], { ready: /^(mongodb:\/\/\S+)/ });
  return { ...running, uri: match[1]! };
}

/**
 * `src/main.ts` against `mongodbUri` on free ports, the Default project bootstrapped; answers once it listens,
 * with its HTTP base URL (any role). `env` may fix the ports (a restart on the same address).
 */
export async function startServiceProcess(mongodbUri: string, env: Record<string, string> = {}): Promise<RunningProcess & { baseUrl: string }> {
  const { running, match } = await startTypeScript("src/main.ts", [], {
    env: { MONGODB_URI: mongodbUri, PORT: "0", GRPC_PORT: "0", SVC_BOOTSTRAP: "1", ...env },
    ready: /health\s+(http:\/\/\S+)\/healthz/,
  });
  return { ...running, baseUrl: match[1]! };
}

/** A TCP port free right now on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Whether a new server can listen on `port` of 127.0.0.1 now. */
export async function portIsFree(port: number): Promise<boolean> {
  const server = net.createServer();
  const bound = await new Promise<boolean>((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => resolve(true));
  });
  if (bound) await new Promise<void>((resolve) => server.close(() => resolve()));
  return bound;
}

/** The ids of the live children of process `pid` (Linux: read from /proc). */
export function childPids(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ")".
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // The process ended while the list was read.
    }
  }
  return children;
}

/** Whether process `pid` is still running (a zombie counts as ended). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}
