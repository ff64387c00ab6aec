// The embedded server on a worker thread of this process: the server's modules load and run on that thread only,
// so the application's thread neither loads them nor gives the server's work its event loop.
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { EmbeddedMongo, EmbeddedMongoOptions } from "./server.ts";

export async function startInWorkerThread(options: EmbeddedMongoOptions): Promise<EmbeddedMongo> {
  // Compiled (npm run build), the worker imports its JavaScript entry. From source, module loader hooks (tsx,
  // which runs this TypeScript) are per thread: the worker registers tsx itself before importing its entry.
  const compiled = import.meta.url.endsWith(".js");
  const entry = new URL(compiled ? "./worker-entry.js" : "./worker-entry.ts", import.meta.url).href;
  let bootstrap = `import(${JSON.stringify(entry)});`;
  if (!compiled) {
    // tsx/esm/api's "import" export target, located from its package.json (require.resolve would pick the CJS build).
    const tsxRoot = path.dirname(createRequire(import.meta.url).resolve("tsx/package.json"));
    const tsxApi = pathToFileURL(path.join(tsxRoot, "dist/esm/api/index.mjs")).href;
    bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  }
  const worker = new Worker(bootstrap, { eval: true, workerData: { ...options, inWorkerThread: false } });
  const address = await new Promise<{ host: string; port: number; uri: string }>((resolve, reject) => {
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`embedded MongoDB worker exited with code ${code}`)));
    worker.once("message", (m: { type: string; host: string; port: number; uri: string }) => resolve(m));
  });
  worker.removeAllListeners("exit");
  worker.removeAllListeners("error");
  worker.on("error", (err) => console.error("embedded MongoDB worker failed:", err));
  let stopped: Promise<void> | undefined;
  return {
    ...address,
    stop: () =>
      (stopped ??= new Promise<void>((resolve) => {
        worker.once("message", () => void worker.terminate().then(() => resolve()));
        worker.postMessage({ type: "stop" });
      })),
  };
}
