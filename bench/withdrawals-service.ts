// The service of bench/withdrawals.bench.ts and bench/request-log.bench.ts, in a process of its own, against the
// database at BENCH_MONGO_URI (the embedded server, run by the bench in another process): Svc in the role
// BENCH_ROLE (all, api or worker) on ephemeral ports, its log lines at the shipped level (info) written to
// /dev/null, every call recorded in the request log unless BENCH_RECORD_REQUESTS is "false" (with BENCH_LOG_STORED
// "false", recorded but not stored: each batch the writer hands over is encoded as its insert command is and sent to
// the database inside a ping, so the service does all of recording's work and the database none), the Default project
// bootstrapped with the sandbox key BENCH_SANDBOX_KEY; beside it, in the same process and on the same database,
// the bare Fastify route the withdrawals bench compares with (POST /bare: one insertOne of a transaction-sized
// document). Prints one JSON line ({ pid, httpPort, barePort }), then serves until its standard input closes; each
// line `commands` it reads is answered with one JSON line ({ commands }) of the commands it sent the database since
// the last such line, by shape (bench/command-shapes.ts), counted only when BENCH_COMMANDS is "1": the driver's
// command monitoring decodes every reply a second time for its events, CPU that `npm start` does not spend. Each
// line `written` is answered likewise with the documents its write commands inserted, updated or deleted
// ({ written }), by command and collection. Each
// line `loop` is answered with one JSON line ({ loop: { p99Ms, maxMs } }): how late its event loop ran what was due
// since the last such line (stalls of the process that every request in flight waits through). A line `pause` stops
// its job queue (as at shutdown) and `resume` starts it again, each answered with {"jobs":"paused"} or
// {"jobs":"resumed"} once done: the settlement of a backlog by a worker that has been running. With BENCH_GC "1", each
// line `gc` is answered with one JSON line ({ gc: { pauseMs, oldSpaceGrowthBytes } }): the garbage collector's pauses
// and how much its old space grew (objects promoted or allocated there), in all, since the process started.
import { getHeapSpaceStatistics } from "node:v8";
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { Binary, serialize } from "bson";
import Fastify from "fastify";
import { createApp } from "../src/app.ts";
import { bootstrapDefaultProject } from "../src/bootstrap.ts";
import { connectDatabase } from "../src/store/database.ts";
import { type RequestLogDocument, RequestLogRepository } from "../src/store/request-log-repository.ts";
import { benchAppOptions } from "./bench-service.ts";
import { countCommands, countWrittenDocuments } from "./command-shapes.ts";

const uri = process.env.BENCH_MONGO_URI!;
const monitored = process.env.BENCH_COMMANDS === "1";
const database = await connectDatabase(uri, { monitorCommands: monitored });
const commands = monitored ? countCommands(database.client) : null;
const written = monitored ? countWrittenDocuments(database.client) : null;
// Other SVC_* variables of the environment apply (to try other settings); the bench sets none.
const settings = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith("SVC_"))) as Record<string, string>;
if (process.env.BENCH_LOG_STORED === "false") {
  // The insert command's bytes, as the driver encodes them, in one round trip that the database answers without
  // decoding the entries or inserting them (a binary field is copied whole).
  RequestLogRepository.prototype.insertMany = async function sendWithoutStoring(logs: RequestLogDocument[]): Promise<void> {
    const insert = serialize({ insert: "request_logs", documents: logs, ordered: false });
    await database.db.command({ ping: 1, notStored: new Binary(insert) });
  };
}
const app = await createApp({
  ...benchAppOptions(uri, database, "bench-admin-token", { ...settings, SVC_ROLE: process.env.BENCH_ROLE ?? "all" }),
  recordRequests: process.env.BENCH_RECORD_REQUESTS !== "false",
});
await bootstrapDefaultProject({ tenancy: app.tenancy, ...app.repositories }, { sandboxKey: process.env.BENCH_SANDBOX_KEY });
const { httpPort } = await app.listen({ http: 0, grpc: 0 });

const bare = Fastify({ logger: false });
const bareCollection = database.db.collection("bare_withdrawals");
bare.post("/bare", async (request, reply) => {
  const body = request.body as { user_id: string; amount_usd: number };
  const now = new Date();
  const doc = {
    user_id: body.user_id,
    type: "withdrawal",
    amount_cents: Math.round(body.amount_usd * 100),
    status: "pending",
    created_at: now,
    updated_at: now,
  };
  await bareCollection.insertOne(doc);
  return reply.code(201).send(doc);
});
await bare.listen({ port: 0, host: "127.0.0.1" });
const barePort = (bare.server.address() as { port: number }).port;

process.stdout.write(`${JSON.stringify({ pid: process.pid, httpPort, barePort })}\n`);

/** The old space's bytes in use; its growth between two collections is what the young generation promoted or pretenured. */
const oldSpaceUsed = () => getHeapSpaceStatistics().find((space) => space.space_name === "old_space")?.space_used_size ?? 0;
const gc = { pauseMs: 0, oldSpaceGrowthBytes: 0 };
if (process.env.BENCH_GC === "1") {
  let lastOldSpace = oldSpaceUsed();
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gc.pauseMs += entry.duration;
    const used = oldSpaceUsed();
    gc.oldSpaceGrowthBytes += Math.max(0, used - lastOldSpace);
    lastOldSpace = used;
  }).observe({ entryTypes: ["gc"] });
}

const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
createInterface({ input: process.stdin }).on("line", (line) => {
  if (line.trim() === "loop") {
    const loop = { p99Ms: loopDelay.percentile(99) / 1e6, maxMs: loopDelay.max / 1e6 };
    loopDelay.reset();
    process.stdout.write(`${JSON.stringify({ loop })}\n`);
  }
  if (line.trim() === "gc") process.stdout.write(`${JSON.stringify({ gc })}\n`);
  if (line.trim() === "pause") void app.jobs.stop().then(() => process.stdout.write('{"jobs":"paused"}\n'));
  if (line.trim() === "resume") void app.jobs.start().then(() => process.stdout.write('{"jobs":"resumed"}\n'));
  if (line.trim() === "commands") process.stdout.write(`${JSON.stringify({ commands: Object.fromEntries(commands?.take() ?? []) })}\n`);
  if (line.trim() === "written") process.stdout.write(`${JSON.stringify({ written: Object.fromEntries(written?.take() ?? []) })}\n`);
});
process.stdin.once("end", async () => {
  await bare.close();
  await app.close();
  await database.close().catch(() => {});
  process.exit(0);
});
