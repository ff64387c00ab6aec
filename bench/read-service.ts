// The service of bench/grpc-vs-rest.bench.ts, in a process of its own: the embedded database on a worker thread
// (as `npm start` runs it), Svc on ephemeral ports with request logs at the shipped level (info) written to
// /dev/null, the Default project bootstrapped and one user created. Prints one JSON line on standard output
// ({ pid, httpPort, grpcPort, key, userId }), then serves until its standard input closes.
import { pino } from "pino";
import { createApp } from "../src/app.ts";
import { bootstrapDefaultProject } from "../src/bootstrap.ts";
import { loadConfig } from "../src/config.ts";
import { startEmbeddedMongo } from "../src/embedded-mongo/index.ts";
import { createLogger } from "../src/observability/logger.ts";
import { connectDatabase } from "../src/store/database.ts";

const mongo = await startEmbeddedMongo({ host: "127.0.0.1", inWorkerThread: true });
const uri = `${mongo.uri.replace(/\/?$/, "")}/bench_grpc_vs_rest`;
const database = await connectDatabase(uri);
// A quota no run reaches: the benchmark measures the checks, not refusals.
const config = loadConfig({ MONGODB_URI: uri, PORT: "0", GRPC_PORT: "0", SVC_RATE_LIMIT: "1000000000" });
const logger = createLogger({ level: "info", destination: pino.destination({ dest: "/dev/null", sync: false }) });
const app = await createApp({
  config,
  database,
  adminToken: "bench-admin-token",
  logger,
  onError: (error, context) => console.error(context, error),
});
const boot = await bootstrapDefaultProject({ tenancy: app.tenancy, ...app.repositories }, {});
const { httpPort, grpcPort } = await app.listen({ http: 0, grpc: 0 });
const key = boot.sandboxKey!;

const created = await fetch(`http://127.0.0.1:${httpPort}/v1/users`, {
  method: "POST",
  headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
  body: JSON.stringify({ phone: "+14155550100", email: "bench@example.com", first_name: "Bench" }),
});
if (created.status !== 201) throw new Error(`creating the user answered ${created.status}: ${await created.text()}`);
const userId = ((await created.json()) as { id: string }).id;

process.stdout.write(`${JSON.stringify({ pid: process.pid, httpPort, grpcPort, key, userId })}\n`);

process.stdin.resume();
process.stdin.once("end", async () => {
  await app.close();
  await database.close();
  await mongo.stop();
  process.exit(0);
});
