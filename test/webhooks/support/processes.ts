// Child processes for crash tests: the embedded database on its own, and the service as `src/main.ts` runs it.
// Each child leads its own process group, so a kill reaches npx, tsx and node alike.
import { spawn, type ChildProcess } from "node:child_process";
import net, { type AddressInfo } from "node:net";

const repoRoot = new URL("../../../", import.meta.url).pathname;

export interface Child {
  process: ChildProcess;
  output: () => string;
}

/** Starts `npx tsx <entry>` and resolves once a line of its stdout matches `ready`. */
export function startChild(entry: string, args: string[], env: Record<string, string>, ready: RegExp, timeoutMs = 20_000): Promise<Child & { match: RegExpExecArray }> {
  const child = spawn("npx", ["tsx", entry, ...args], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${entry} not ready within ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = ready.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ process: child, output: () => output, match });
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${entry} exited (${code ?? signal}) before it was ready:\n${output}`));
    });
  });
}

/** Kills a child and its descendants (npx, tsx, node: one process group) with `signal`; waits for its exit. */
export async function killChild(child: Child, signal: NodeJS.Signals): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.process.once("exit", () => resolve()));
  process.kill(-child.process.pid!, signal);
  await exited;
}

/** A TCP port free right now on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
