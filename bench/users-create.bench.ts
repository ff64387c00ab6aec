// POST /v1/users (with an Idempotency-Key) against a bare Fastify route inserting one document into the same
// database, in the same run. Goal: the REST creation reaches at least 40% of the bare route's throughput.
import "./as-npm-start.ts";
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import Fastify from "fastify";
import { pino } from "pino";
import { createLogger } from "../src/observability/logger.ts";
import { createApp } from "../src/app.ts";
import { bootstrapDefaultProject } from "../src/bootstrap.ts";
import { loadConfig } from "../src/config.ts";
import { formatLoad, LOAD_TABLE_HEADER, runLoad, type LoadResult } from "./http-load.ts";
import { startBenchDatabase } from "./bench-service.ts";
import { machineDescription } from "./machine.ts";

// A route with several round trips shows its capacity only with enough requests in flight: both levels are
// measured, for both routes.
const CONCURRENCY_LEVELS = [32, 128];
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 6000);
const ROUNDS = 2;

const { mongo, uri, database } = await startBenchDatabase("bench_users");
const config = loadConfig({ MONGODB_URI: uri, PORT: "0", GRPC_PORT: "0", SVC_RATE_LIMIT: "100000000" });
// Svc logs every request at the shipped level (info), to /dev/null: their cost is part of the figure.
const logger = createLogger({ level: "info", destination: pino.destination("/dev/null") });
const app = await createApp({ config, database, adminToken: "bench", logger, onError: () => {} });
const boot = await bootstrapDefaultProject({ tenancy: app.tenancy, ...app.repositories }, {});
const { httpPort } = await app.listen({ http: 0, grpc: 0 });

const bare = Fastify({ logger: false });
const bareCollection = database.db.collection("bare_users");
bare.post("/bare", async (request, reply) => {
  const body = request.body as { phone: string };
  const doc = { phone: body.phone, created_at: new Date() };
  await bareCollection.insertOne(doc);
  return reply.code(201).send(doc);
});
await bare.listen({ port: 0, host: "127.0.0.1" });
const barePort = (bare.server.address() as { port: number }).port;

let phone = 0;
const nextPhone = () => `+1${String(2_000_000_000 + phone++)}`;
const json = { "content-type": "application/json" };

async function measure(concurrency: number): Promise<{ bare: LoadResult; rest: LoadResult }> {
  const bareResult = await runLoad({
    url: `http://127.0.0.1:${barePort}/bare`,
    method: "POST",
    headers: () => json,
    body: () => JSON.stringify({ phone: nextPhone() }),
    durationMs: DURATION_MS,
    okStatuses: [201],
    concurrency,
  });
  const restResult = await runLoad({
    url: `http://127.0.0.1:${httpPort}/v1/users`,
    method: "POST",
    headers: () => ({ ...json, authorization: `Bearer ${boot.sandboxKey}`, "idempotency-key": randomUUID() }),
    body: () => JSON.stringify({ phone: nextPhone() }),
    durationMs: DURATION_MS,
    okStatuses: [201],
    concurrency,
  });
  return { bare: bareResult, rest: restResult };
}

await measure(32); // warm-up: JIT, indexes, connection pools
const rows: string[] = [];
const summary: string[] = [];
let best = 0;
for (const concurrency of CONCURRENCY_LEVELS) {
  const ratios: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const { bare: b, rest: r } = await measure(concurrency);
    rows.push(
      formatLoad(`bare insert, ${concurrency} in flight, round ${round}`, b),
      formatLoad(`POST /v1/users, ${concurrency} in flight, round ${round}`, r),
    );
    ratios.push(r.perSecond / b.perSecond);
  }
  const mean = ratios.reduce((a, b) => a + b, 0) / ratios.length;
  best = Math.max(best, mean);
  summary.push(`- ${concurrency} in flight: ${(mean * 100).toFixed(0)}% (rounds: ${ratios.map((x) => `${(x * 100).toFixed(0)}%`).join(", ")})`);
}
const ratio = best;
const report = `# POST /v1/users against a bare insert route

Machine: ${machineDescription()}

One process: the embedded MongoDB server, Svc (REST gateway), a bare Fastify route doing one \`insertOne\`,
and the load generator (keep-alive connections, as many as requests in flight; ${DURATION_MS / 1000} s per run, after a
warm-up run; the bare route and Svc measured in turn at each level).
Each POST /v1/users carries a fresh Idempotency-Key and a new phone number (sandbox key).

${LOAD_TABLE_HEADER}
${rows.join("\n")}

REST creation throughput / bare insert throughput (mean of the rounds at each level):

${summary.join("\n")}

At the better level: **${(ratio * 100).toFixed(0)}%** (goal: at least 40%) — ${ratio >= 0.4 ? "met" : "not met"}.
`;
writeFileSync(new URL("./results/users-create.md", import.meta.url), report);
console.log(report);
await bare.close();
await app.close();
await database.close();
await mongo.stop();
