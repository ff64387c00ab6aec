// Public entry point of the embedded MongoDB-wire-compatible server (development and tests only; production
// runs on a real MongoDB given by MONGODB_URI).
import type { EmbeddedMongo, EmbeddedMongoOptions } from "./server/server.ts";
import { startInWorkerThread } from "./server/worker-thread.ts";

export type { EmbeddedMongo, EmbeddedMongoOptions };

/**
 * Starts a server on this thread, or on a worker thread with `inWorkerThread` (its modules are then loaded on that
 * thread alone: this one loads none of them).
 */
export async function startEmbeddedMongo(options: EmbeddedMongoOptions = {}): Promise<EmbeddedMongo> {
  if (options.inWorkerThread) return startInWorkerThread(options);
  const { startServer } = await import("./server/server.ts");
  return startServer(options);
}
