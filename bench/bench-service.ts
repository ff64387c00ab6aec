// Svc in a benchmark's process, started as `npm start` starts it: the embedded database on a worker thread (so it
// does not share the event loop of the service and the load generator), the service's configuration on ephemeral
// ports with a rate limit no run reaches (the benchmarks measure the work, not refusals), and request logs at the
// shipped level (info) written to /dev/null, so their cost counts and their lines do not show.
import { pino } from "pino";
import type { AppOptions } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { startEmbeddedMongo } from "../src/embedded-mongo/index.ts";
import { createLogger } from "../src/observability/logger.ts";
import { connectDatabase, type Database } from "../src/store/database.ts";

/** The embedded database on a worker thread, and a connection to its database `name`. */
export async function startBenchDatabase(name: string) {
  const mongo = await startEmbeddedMongo({ host: "127.0.0.1", inWorkerThread: true });
  const uri = `${mongo.uri.replace(/\/?$/, "")}/${name}`;
  return { mongo, uri, database: await connectDatabase(uri) };
}

/** createApp's options for the database at `uri`; `env` adds to the configuration's variables (SVC_ROLE, ...). */
export function benchAppOptions(uri: string, database: Database, adminToken: string, env: Record<string, string> = {}): AppOptions {
  return {
    config: loadConfig({ MONGODB_URI: uri, PORT: "0", GRPC_PORT: "0", SVC_RATE_LIMIT: "1000000000", ...env }),
    database,
    adminToken,
    logger: createLogger({ level: "info", destination: pino.destination({ dest: "/dev/null", sync: false }) }),
    onError: (error, context) => console.error(context, error),
  };
}
