// The cost of the request log on the rest-read and users-create loads: the same load against two Svc processes'
// worth of app in one process, one recording every call and one not (AppOptions.recordRequests), over one
// embedded database, taken in turn within each round (the order swapped every round). Goal: at most 5% fewer
// requests per second with recording. Writes bench/results/request-log.md.
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { createApp, type App } from "../src/app.ts";
import { bootstrapDefaultProject } from "../src/bootstrap.ts";
import { requestLogEntry } from "../src/pipeline/request-log-entry.ts";
import { RequestLogRepository } from "../src/store/request-log-repository.ts";
import { DEFAULT_REQUEST_LOG_WRITER, RequestLogWriter } from "../src/store/request-log-writer.ts";
import { formatLoad, LOAD_TABLE_HEADER, runLoad, type LoadResult } from "./http-load.ts";
import { benchAppOptions, startBenchDatabase } from "./bench-service.ts";
import { machineDescription } from "./machine.ts";

const CONCURRENCY = 32;
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const WARM_UP_MS = 2000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const GOAL = 0.05;

const loadBefore = loadavg()[0]!;
const { mongo, uri, database } = await startBenchDatabase("bench_request_log");
// API processes (SVC_ROLE=api): no job workers or sweeps, whose timers would weigh on CPU per request when the
// shared machine leaves the run few requests per second.
const appOptions = benchAppOptions(uri, database, "bench", { SVC_ROLE: "api" });

type Variant = "recording" | "not recording";
const VARIANTS: Variant[] = ["recording", "not recording"];
const apps = new Map<Variant, { app: App; port: number }>();
for (const variant of VARIANTS) {
  const app = await createApp({ ...appOptions, recordRequests: variant === "recording" });
  const { httpPort } = await app.listen({ http: 0, grpc: 0 });
  apps.set(variant, { app, port: httpPort });
}
// One Default project and key for both: the same database serves them.
const boot = await bootstrapDefaultProject({ tenancy: apps.get("recording")!.app.tenancy, ...apps.get("recording")!.app.repositories }, {});
const authorization = `Bearer ${boot.sandboxKey}`;
const json = { "content-type": "application/json" };
const created = await fetch(`http://127.0.0.1:${apps.get("recording")!.port}/v1/users`, {
  method: "POST",
  headers: { authorization, ...json },
  body: JSON.stringify({ phone: "+14155550100", email: "bench@example.com", first_name: "Bench" }),
});
if (created.status !== 201) throw new Error(`creating the user answered ${created.status}: ${await created.text()}`);
const userId = ((await created.json()) as { id: string }).id;

let phone = 0;
const nextPhone = () => `+1${String(3_000_000_000 + phone++)}`;

type Load = "rest-read" | "users-create";
const LOADS: Load[] = ["rest-read", "users-create"];
const LABELS: Record<Load, string> = { "rest-read": "GET /v1/users/{id}", "users-create": "POST /v1/users with an Idempotency-Key" };

function load(kind: Load, variant: Variant, durationMs: number): Promise<LoadResult> {
  const base = `http://127.0.0.1:${apps.get(variant)!.port}`;
  if (kind === "rest-read") {
    return runLoad({
      url: `${base}/v1/users/${userId}`,
      method: "GET",
      headers: () => ({ authorization }),
      concurrency: CONCURRENCY,
      durationMs,
      okStatuses: [200],
    });
  }
  return runLoad({
    url: `${base}/v1/users`,
    method: "POST",
    headers: () => ({ ...json, authorization, "idempotency-key": randomUUID() }),
    body: () => JSON.stringify({ phone: nextPhone() }),
    concurrency: CONCURRENCY,
    durationMs,
    okStatuses: [201],
  });
}

for (const kind of LOADS) for (const variant of VARIANTS) await load(kind, variant, WARM_UP_MS); // JIT, pools, indexes

const rows: string[] = [];
const cpuByRun: { kind: Load; variant: Variant; ms: number }[] = [];
const cpuRowsOf = (kind: Load, variant: Variant) => cpuByRun.filter((r) => r.kind === kind && r.variant === variant).map((r) => r.ms);
const costs: Record<Load, number[]> = { "rest-read": [], "users-create": [] };
// CPU of the whole process (service, database thread, load generator) per request: on a machine shared with
// other work, throughput follows the CPU the process is given, while CPU per request follows its own work.
const cpuCosts: Record<Load, number[]> = { "rest-read": [], "users-create": [] };
const cpuRows: string[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  for (const kind of LOADS) {
    const order = round % 2 === 1 ? VARIANTS : [...VARIANTS].reverse();
    const results = {} as Record<Variant, LoadResult>;
    const cpuPerRequest = {} as Record<Variant, number>;
    for (const variant of order) {
      const cpuBefore = process.cpuUsage();
      const result = await load(kind, variant, DURATION_MS);
      const cpu = process.cpuUsage(cpuBefore);
      if (result.errors > 0) throw new Error(`${kind}, ${variant}: ${result.errors} failed requests`);
      results[variant] = result;
      cpuPerRequest[variant] = (cpu.user + cpu.system) / 1000 / result.requests;
      cpuByRun.push({ kind, variant, ms: cpuPerRequest[variant] });
      rows.push(formatLoad(`${LABELS[kind]}, ${variant}, round ${round}`, result));
      cpuRows.push(`| ${LABELS[kind]}, ${variant}, round ${round} | ${cpuPerRequest[variant].toFixed(3)} |`);
      console.error(rows.at(-1), cpuRows.at(-1));
    }
    // Cost per request is the inverse of throughput at the same concurrency.
    costs[kind].push(results["not recording"].perSecond / results.recording.perSecond - 1);
    cpuCosts[kind].push(cpuPerRequest.recording / cpuPerRequest["not recording"] - 1);
  }
}

const written = await database.db.collection("request_logs").countDocuments();

// The recording path alone, outside any request: entries as the pipeline builds them, handed to a writer like the
// app's and written to the same database. Its CPU per entry against the CPU per request of the runs without
// recording is the share recording adds, measured without the noise of two loads run seconds apart.
const ALONE = 20_000;
const aloneWriter = new RequestLogWriter(new RequestLogRepository(database.db), { ...DEFAULT_REQUEST_LOG_WRITER, onError: (e) => console.error(e) });
const principal = { apiKeyId: "key_bench", projectId: "bench-alone", organizationId: "o", livemode: false, rateLimit: 1 };
const aloneCpuBefore = process.cpuUsage();
for (let i = 0; i < ALONE; i++) {
  aloneWriter.record(
    requestLogEntry({
      logId: `req_alone${i}`,
      source: "rest",
      method: null,
      route: { verb: "GET", path: `/v1/users/${userId}`, template: "/v1/users/{id}", successStatus: 200 },
      principal,
      idempotencyKey: null,
      replayed: false,
      refusal: null,
      durationMs: 3,
      createdAt: new Date(),
    }),
  );
  // As calls arrive: a few entries per event-loop turn, the writer's timer and batches running between them.
  if (i % 32 === 31) await new Promise((resolve) => setImmediate(resolve));
}
await aloneWriter.flush();
const aloneCpu = process.cpuUsage(aloneCpuBefore);
const cpuPerEntry = (aloneCpu.user + aloneCpu.system) / 1000 / ALONE;
const cpuWithout = (kind: Load) => median(cpuRowsOf(kind, "not recording"));
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const signed = (x: number) => `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)}%`;
const summaryRow = (measure: string, values: number[]) => {
  const m = median(values);
  return `| ${measure} | ${signed(m)} | ${values.map(signed).join(", ")} | at most +${GOAL * 100}% | ${m <= GOAL ? "met" : "**not met**"} |`;
};
const summary = LOADS.flatMap((kind) => [
  summaryRow(`${LABELS[kind]}: req/s without ÷ req/s with − 1`, costs[kind]),
  summaryRow(`${LABELS[kind]}: CPU per request with ÷ without − 1`, cpuCosts[kind]),
  summaryRow(`${LABELS[kind]}: CPU of recording one call alone ÷ CPU per request without`, [cpuPerEntry / cpuWithout(kind)]),
]);

const report = `# The request log's cost on the rest-read and users-create loads

Machine: ${machineDescription()}. One-minute load average ${loadBefore.toFixed(1)} when the run started and
${loadavg()[0]!.toFixed(1)} when it ended: other processes share this machine, so rounds differ; the two variants
of one load are measured seconds apart within a round, and the median of the rounds is reported.

One process: the embedded MongoDB server (worker thread), two Svc API apps (\`SVC_ROLE=api\`: no job workers) over that one database (one recording
every call in the request log, one not: \`recordRequests: false\`), and the load generator; ${CONCURRENCY} requests
in flight over keep-alive connections, ${DURATION_MS / 1000} s per run after a ${WARM_UP_MS / 1000} s warm-up of each, ${ROUNDS} rounds, the
order of the two variants swapped every round. Produced by \`npm run bench -- request-log\` (bench/request-log.bench.ts).

- rest-read: \`GET /v1/users/{id}\` with a sandbox key, as bench/rest-read.bench.ts loads it.
- users-create: \`POST /v1/users\` with a fresh Idempotency-Key and phone number, as bench/users-create.bench.ts.
- Recording: one entry per call handed to the batching writer (500 per insert, or after 200 ms); ${written}
  entries were written in all.

${LOAD_TABLE_HEADER}
${rows.join("\n")}

| run | process CPU ms per request |
|---|---|
${cpuRows.join("\n")}
| recording alone: ${ALONE} entries built, batched and written, per entry | ${cpuPerEntry.toFixed(3)} |

| cost of recording | median of the rounds | each round | goal | |
|---|---|---|---|---|
${summary.join("\n")}

Reading the figures. The two variants of a load run seconds apart on a machine shared with five other sessions
(load average 8 to 17 on 2 cores during the runs of 2026-11-27): the same variant's throughput moved by half
between rounds, so the end-to-end rows (req/s, and CPU per request, which at a few hundred requests a second also
carries whatever else the process did meanwhile) bound the cost only loosely. The recording path measured alone
(entries built by the pipeline's function, batched and inserted as the writer does, CPU of the whole process) is
the steadier figure: its share of a request's CPU is the row "CPU of recording one call alone".

Where that cost goes (a one-off measurement of 2026-11-27, 20,000 entries into the embedded database, CPU of the
process per entry): with the six indexes of the collection 0.104 ms at 130 entries per insert (the batch size at
about 650 requests a second) and 0.070 ms at 500; with only the tenant's newest-first and TTL indexes 0.060 and
0.055 ms; with no index 0.039 and 0.029 ms. Most of it is the embedded database maintaining the filters' indexes
in its own thread; with a real MongoDB that work is the database server's, and Svc's process keeps the entry's
construction, its batching and the driver's encoding (the "no index" figures are an upper bound of that).
`;
writeFileSync(new URL("./results/request-log.md", import.meta.url), report);
console.log(report);
for (const { app } of apps.values()) await app.close();
await database.close();
await mongo.stop();
