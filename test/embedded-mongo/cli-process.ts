// The embedded server's CLI run as a child process of its own (so a test can SIGKILL the server alone).
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { compiledEntry } from "../support/processes.ts";

/** Starts the CLI on `dbPath`; resolves with the child and the URI it prints. */
export async function startCli(dbPath: string, extra: string[] = []): Promise<{ child: ChildProcess; uri: string }> {
  const child = spawn(process.execPath, [compiledEntry("src/embedded-mongo/cli.ts"), "--port", "0", "--dbpath", dbPath, ...extra], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const uri = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`CLI exited early with ${code}`)));
  });
  return { child, uri };
}
