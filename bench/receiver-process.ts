// The benchmarks' webhook receiver (webhook-receiver.ts) in its own process, so the server's figure is its own.
import { type ChildProcess, spawn } from "node:child_process";

export interface ReceiverProcess {
  process: ChildProcess;
  /** Its base URL; any path is an endpoint that answers 200 at once. */
  url: string;
  /** The [event id, arrival time] of every delivery since the last call, and forgets them. */
  takeReceipts(): Promise<[string, number][]>;
}

export async function startReceiverProcess(): Promise<ReceiverProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", new URL("./webhook-receiver.ts", import.meta.url).pathname], {
    // Its standard input stays open while this process lives: the receiver ends with it, whatever ends it.
    stdio: ["pipe", "pipe", "inherit"],
  });
  const port = await new Promise<number>((resolve) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      const match = /port (\d+)/.exec(chunk.toString());
      if (match) resolve(Number(match[1]));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    process: child,
    url,
    takeReceipts: async () => (await fetch(`${url}/__receipts`)).json() as Promise<[string, number][]>,
  };
}
