// Body of the worker thread used by startEmbeddedMongo({ inWorkerThread: true }): runs the server on its own
// event loop (and so on another core than the application), reporting its address to the parent.
import { parentPort, workerData } from "node:worker_threads";
import { type EmbeddedMongoOptions, startServer } from "./server.ts";

const server = await startServer({ ...(workerData as EmbeddedMongoOptions), inWorkerThread: false });
parentPort!.postMessage({ type: "listening", host: server.host, port: server.port, uri: server.uri });
parentPort!.on("message", (message: { type: string }) => {
  if (message.type === "stop") {
    void server.stop().then(() => parentPort!.postMessage({ type: "stopped" }));
  }
});
