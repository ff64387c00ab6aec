// Webhook delivery: events published through the production relay (what AdminService.PublishEvent and user
// creation call) are fanned out to endpoints on a local receiver in another process. Measures sustained
// deliveries/s against a bare loop of signed POSTs to the same receiver (the ceiling without any database: the same
// request as a delivery's, signed and sent by the same code) in alternated pairs of rounds, the p50/p99 time from
// event creation to receipt at 200 events/s, and Agenda's own job throughput on the same database. Writes the top of
// bench/results/webhook-delivery.md; the reading written by hand below it is kept.
import "./as-npm-start.ts";
import { loadavg } from "node:os";
import type { Clock } from "../src/domain/clock.ts";
import { newEventId } from "../src/domain/ids.ts";
import { newUuid } from "../src/domain/random.ts";
import type { EventDocument } from "../src/store/event-repository.ts";
import { sendSignedEvent } from "../src/webhooks/signed-request.ts";
import { AttemptConnections } from "../src/webhooks/attempt-connections.ts";
import { FIRST_ATTEMPTS_JOB } from "../src/webhooks/first-attempt-guarantees.ts";
import { DELIVERY_JOB } from "../src/webhooks/webhook-delivery.ts";
import { addBenchEndpoint } from "./bench-endpoint.ts";
import { startWebhookDelivery, WEBHOOK_CONCURRENCY } from "./delivery-pipeline.ts";
import { commandTable } from "./command-shapes.ts";
import { machineDescription } from "./machine.ts";
import { threadCpuSecondsOf, threadCpuSplit } from "./process-cpu.ts";
import { startReceiverProcess } from "./receiver-process.ts";
import { writeResults } from "./results-file.ts";
import { median } from "./statistics.ts";

/** How long each round of the throughput pairs publishes, and how long the bare loop of the same pair posts. */
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 6000);
/**
 * Pairs of rounds, each the bare loop then the pipeline: single runs on the shared machine swing by 15% either way,
 * and the median of the pairs' ratios holds better than any one of them.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
/**
 * Publishing before the rounds, unmeasured: the bare loop runs on code the deliveries made hot, and a pipeline
 * measured from a cold start would pay the compiler's work on its code (a third of the CPU per delivery of a short
 * run, on the threads beside the main one) where the bare loop does not.
 */
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 2000);
const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 10_000);
// The latency part is what the p99 goal is read from: it cannot be left out, only shortened.
if (!(LATENCY_MS >= 1000)) throw new Error(`BENCH_LATENCY_MS must be at least 1000 (ms of the latency part); it is ${process.env.BENCH_LATENCY_MS}`);
const ENDPOINTS = 10;
/**
 * Concurrent publishers of the throughput rounds (BENCH_PUBLISHERS). The relay writes one batch at a time and a
 * publisher waits for its batch, so a batch carries at most this many events (ten times as many deliveries). 512 was
 * tried to queue more ahead: its batches of 5,120 deliveries took 1.5 s each and the round ran at half the rate of
 * 64's, one round stalling, so larger batches do not measure more of the pipeline.
 */
const PUBLISHERS = Number(process.env.BENCH_PUBLISHERS ?? 64);
const LATENCY_RATE = 200;
/**
 * Posts the bare loop keeps in flight: the pipeline's own bound on attempts in flight (SVC_WEBHOOK_CONCURRENCY's
 * default), so that the loop is the ceiling of the same concurrency. At 64 it ran below the pipeline's rate.
 */
const BARE_CONCURRENCY = WEBHOOK_CONCURRENCY;
/** Time left between rounds for the last one's writes and collections to settle. */
const SETTLE_MS = 1000;
const AGENDA_JOBS = 2000;

const { process: receiverProcess, url: receiverUrl, takeReceipts } = await startReceiverProcess();

// The service's delivery pipeline, wired as src/app.ts wires it (its job queue included), over the embedded
// database in a worker thread.
const clock: Clock = () => new Date();
const onError = (error: unknown) => console.error("webhook delivery", error);
const { mongo, database, db, endpoints, jobs, webhooks, relay, commands, written } = await startWebhookDelivery("bench_webhooks", { clock, onError });
const projectId = newUuid();

function addEndpoint(path: string): Promise<string> {
  return addBenchEndpoint(endpoints, projectId, `${receiverUrl}${path}`);
}
const createdAt = new Map<string, number>();
/** An event as the bench publishes it. */
function benchEvent(): EventDocument {
  return {
    _id: newEventId(),
    project_id: projectId,
    livemode: false,
    type: "transaction.completed",
    created_at: clock(),
    data: {
      object: {
        id: "tx_1",
        object: "transaction",
        user_id: "123456789",
        type: "deposit",
        direction: "in",
        amount_usd: 25,
        fee_usd: 0.5,
        status: "completed",
        fiat_currency: "EUR",
        fiat_amount: 23,
        livemode: false,
        created_at: new Date().toISOString(),
      },
    },
    fanned_out: false,
  };
}
async function publish(): Promise<void> {
  const event = benchEvent();
  createdAt.set(event._id, event.created_at.getTime());
  await relay.publish(event);
}
function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}
const round = (n: number, digits = 1) => Number(n.toFixed(digits));
const round1 = (n: number) => n.toFixed(1);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const endpointIds: string[] = [];
for (let i = 0; i < ENDPOINTS; i++) endpointIds.push(await addEndpoint(`/e${i}`));
/** Publishes with PUBLISHERS concurrent publishers until `ms` have passed; answers how many events. */
async function publishFor(ms: number): Promise<number> {
  const start = performance.now();
  let count = 0;
  await Promise.all(
    Array.from({ length: PUBLISHERS }, async () => {
      while (performance.now() - start < ms) {
        await publish();
        count++;
      }
    }),
  );
  return count;
}
/**
 * Empties the deliveries and events of the rounds before, outside the measured spans, so that every round runs on
 * collections of the same size (seven rounds would otherwise grow them to 100,000 records, and the database's heap
 * and its collections with them).
 */
async function clearRound(): Promise<void> {
  await Promise.all([db.collection("webhook_deliveries").deleteMany({}), db.collection("events").deleteMany({})]);
  createdAt.clear();
  await sleep(SETTLE_MS);
}

// 1. Warm-up: the pipeline's code (and sendSignedEvent's, which the bare loop runs) compiled before any round.
const warmupEvents = await publishFor(WARMUP_MS);
for (let received = 0, waitedFrom = performance.now(); received < warmupEvents * ENDPOINTS && performance.now() - waitedFrom < 60_000; ) {
  received += (await takeReceipts()).length;
  await sleep(100);
}
await takeReceipts();
await clearRound();
commands?.take();
written?.take();

// 2. Pairs of rounds. The bare loop: a delivery's request (an event as published, to an endpoint as fan-out reads
// it) signed and sent by the same code to the same receiver, no database; the pipeline meanwhile started and idle.
// It keeps its connections open as the pipeline's deliveries do (a pool per vetted address).
const bareEndpoint = { ...(await endpoints.findById(endpointIds[0]!))!, url: `${receiverUrl}/bare` };
const bareEvent = benchEvent();
const send = { timeoutMs: 10_000, clock, connections: new AttemptConnections() };
async function bareRound() {
  let posts = 0;
  const start = performance.now();
  const cpu = threadCpuSecondsOf(process.pid);
  await Promise.all(
    Array.from({ length: BARE_CONCURRENCY }, async () => {
      while (performance.now() - start < ROUND_MS) {
        const result = await sendSignedEvent(bareEndpoint, bareEvent, 1, send);
        if (result.error === null) posts++;
      }
    }),
  );
  const perSecond = posts / ((performance.now() - start) / 1000);
  const split = threadCpuSplit(process.pid, cpu, threadCpuSecondsOf(process.pid));
  await takeReceipts();
  return { posts, perSecond, cpu: split };
}
/** The pipeline: PUBLISHERS publishers as fast as the relay takes them, each event fanned out to 10 endpoints. */
async function pipelineRound() {
  const start = performance.now();
  const cpu = threadCpuSecondsOf(process.pid);
  // The span of the round on the clock of `node --cpu-prof` profiles (µs), to read them over it alone.
  const monotonicStartUs = process.hrtime.bigint() / 1000n;
  const events = await publishFor(ROUND_MS);
  const publishSeconds = (performance.now() - start) / 1000;
  const receiptTimes: number[] = [];
  while (receiptTimes.length < events * ENDPOINTS && performance.now() - start < ROUND_MS * 8) {
    for (const [, at] of await takeReceipts()) receiptTimes.push(at);
    await sleep(100);
  }
  receiptTimes.sort((a, b) => a - b);
  const split = threadCpuSplit(process.pid, cpu, threadCpuSecondsOf(process.pid));
  const monotonicUs = [monotonicStartUs, process.hrtime.bigint() / 1000n];
  const startedAt = performance.timeOrigin + start;
  await sleep(500);
  const notSucceeded = await db.collection("webhook_deliveries").countDocuments({ status: { $ne: "succeeded" } });
  return {
    events,
    eventsPerSecond: events / publishSeconds,
    delivered: receiptTimes.length,
    expected: events * ENDPOINTS,
    // From the first event published to the last delivery received: the rate the whole pipeline sustained.
    perSecond: receiptTimes.length / ((receiptTimes.at(-1)! - startedAt) / 1000),
    drainMs: Math.round(receiptTimes.at(-1)! - (startedAt + publishSeconds * 1000)),
    notSucceeded,
    cpu: split,
    monotonicUs,
  };
}
const pairs: { bare: Awaited<ReturnType<typeof bareRound>>; pipeline: Awaited<ReturnType<typeof pipelineRound>>; load: number }[] = [];
const loadBefore = loadavg()[0]!;
for (let round = 1; round <= ROUNDS; round++) {
  const bare = await bareRound();
  await sleep(SETTLE_MS);
  const pipeline = await pipelineRound();
  const load = loadavg()[0]!;
  pairs.push({ bare, pipeline, load });
  console.log(
    `pair ${round}: bare ${round1(bare.perSecond)} posts/s, pipeline ${round1(pipeline.perSecond)} deliveries/s ` +
      `(${pipeline.delivered} of ${pipeline.expected}, not succeeded ${pipeline.notSucceeded}), ` +
      `${round1((100 * pipeline.perSecond) / bare.perSecond)}%, load ${load.toFixed(1)}, monotonicUs ${pipeline.monotonicUs.join("-")}`,
  );
  await clearRound();
}
if (commands) {
  const delivered = pairs.reduce((sum, p) => sum + p.pipeline.delivered, 0);
  console.log(commandTable("Commands of the pipeline rounds", commands.take(), delivered, "delivery").join("\n"));
  if (written) console.log(commandTable("Documents written in the pipeline rounds", written.take(), delivered, "delivery").join("\n"));
}

// 3. Latency at 200 events/s, one endpoint: from the event's creation to its receipt.
for (const id of endpointIds.slice(1)) await endpoints.delete({ projectId, livemode: false }, id);
await takeReceipts();
const latencyStart = performance.now();
const inflight: Promise<void>[] = [];
for (let i = 0; performance.now() - latencyStart < LATENCY_MS; i++) {
  const wait = latencyStart + (i * 1000) / LATENCY_RATE - performance.now();
  if (wait > 0) await sleep(wait);
  inflight.push(publish());
}
await Promise.all(inflight);
await sleep(1000);
const latencyReceipts = await takeReceipts();
const latencies = latencyReceipts
  .map(([id, at]) => at - createdAt.get(id)!)
  .filter(Number.isFinite)
  .sort((a, b) => a - b);
const latency = {
  events: latencyReceipts.length,
  rate: round(latencyReceipts.length / (LATENCY_MS / 1000)),
  p50: round(percentile(latencies, 50)),
  p99: round(percentile(latencies, 99)),
  max: round(latencies.at(-1)!),
};
console.log("latency", latency);
const guaranteeJobsLeft = await db.collection("jobs").countDocuments({ name: { $in: [DELIVERY_JOB, FIRST_ATTEMPTS_JOB] } });

await webhooks.stop();

// 4. Agenda alone: jobs that do nothing, scheduled for now, locked, run and removed.
let ran = 0;
let allRan: () => void = () => {};
const done = new Promise<void>((resolve) => (allRan = resolve));
jobs.define("bench-noop", async () => {
  if (++ran === AGENDA_JOBS) allRan();
});
const agendaStart = performance.now();
for (let i = 0; i < AGENDA_JOBS; i += 100) {
  await Promise.all(Array.from({ length: 100 }, (_, j) => jobs.schedule("bench-noop", { n: i + j }, new Date())));
}
await done;
const agenda = { jobs: AGENDA_JOBS, jobsPerSecond: round(AGENDA_JOBS / ((performance.now() - agendaStart) / 1000)) };
console.log("agenda", agenda);
const loadAfter = loadavg()[0]!;

await jobs.stop();
await database.close();
await mongo.stop();
receiverProcess.kill();

const goal = (ok: boolean) => (ok ? "met" : "**missed**");
/** Milliseconds of CPU per item, from seconds. */
const perItem = (seconds: number, items: number) => (1000 * seconds) / Math.max(1, items);
const ms = (x: number) => x.toFixed(3);
const ratios = pairs.map((p) => p.pipeline.perSecond / p.bare.perSecond);
const medianRatio = median(ratios);
const deliveryCpu = pairs.map(({ pipeline: { cpu, delivered } }) => ({
  main: perItem(cpu.main, delivered),
  database: perItem(cpu.busiest, delivered),
  other: perItem(cpu.rest, delivered),
}));
const postCpu = pairs.map(({ bare: { cpu, posts } }) => ({ main: perItem(cpu.main, posts), other: perItem(cpu.busiest + cpu.rest, posts) }));
/** CPU of a delivery over all threads against a bare POST's, per pair. */
const cpuRatios = pairs.map((_, i) => {
  const d = deliveryCpu[i]!;
  const b = postCpu[i]!;
  return (d.main + d.database + d.other) / (b.main + b.other);
});
const allDelivered = pairs.every((p) => p.pipeline.delivered === p.pipeline.expected && p.pipeline.notSucceeded === 0);
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

const lines = [
  "# Webhook delivery",
  "",
  `Machine: ${machineDescription()}; 1-minute load average ${loadBefore.toFixed(1)} before the rounds, ${loadAfter.toFixed(1)} at the end (other work shared the cores).`,
  "",
  "One process: the delivery pipeline of `src/app.ts` (relay, fan-out, delivery jobs on Agenda) over the embedded MongoDB",
  "in a worker thread. Events are published through `EventRelay.publish`, the path of AdminService.PublishEvent and of user",
  "creation, without the HTTP request in front (bench/users-create measures that). The receiver is a separate process",
  "answering 200 at once. The bare loop sends a delivery's own request (`sendSignedEvent`: the same event, headers,",
  `signing and client) to the same receiver with no database, ${BARE_CONCURRENCY} in flight (the pipeline's bound on attempts in flight).`,
  "",
  `Method: after ${WARMUP_MS / 1000} s of publishing, unmeasured (so that both run compiled code), ${ROUNDS} pairs of rounds, each the bare loop`,
  `for ${ROUND_MS / 1000} s, then the pipeline: ${PUBLISHERS} concurrent publishers for ${ROUND_MS / 1000} s, ${ENDPOINTS} endpoints per event, deliveries counted from`,
  "the first event published to the last receipt. Between rounds the deliveries and events written are removed, so",
  "every round runs on the same collections. A pair's ratio is its pipeline's deliveries/s over its bare loop's posts/s;",
  "CPU per item is every thread of the process over the round (main, the database's worker thread, the others: GC",
  "helpers, libuv's pool), per delivery received or post answered.",
  "",
  "What limits each side: the bare loop, its posts in flight and the main thread (signing, the HTTP client), with the",
  "receiver's process beside it. The pipeline, the same bound on exchanges in flight and the same main thread, which also",
  "runs the relay's and the recording's database commands, and the database's thread: a relay batch (one per",
  `${PUBLISHERS} events) is written while the attempts of the one before it are sent, and its writes and those attempts`,
  "share the process's CPU. On cores that other work keeps busy the process gets a share of CPU, not a core per thread,",
  "and the ratio then follows a delivery's CPU over a post's (the table's seventh column) more than either side's concurrency.",
  "",
  "| pair | bare loop posts/s | deliveries/s (received of expected; drain after publishing) | deliveries / posts | CPU per delivery: main, database, other (ms) | CPU per post: main, other (ms) | delivery CPU / post CPU | load (1 min) |",
  "|---|---|---|---|---|---|---|---|",
  ...pairs.map(
    ({ bare, pipeline, load }, i) =>
      `| ${i + 1} | ${round(bare.perSecond)} | ${round(pipeline.perSecond)} (${pipeline.delivered} of ${pipeline.expected}; ${pipeline.drainMs} ms) | ${pct(ratios[i]!)} | ${ms(deliveryCpu[i]!.main)}, ${ms(deliveryCpu[i]!.database)}, ${ms(deliveryCpu[i]!.other)} | ${ms(postCpu[i]!.main)}, ${ms(postCpu[i]!.other)} | ${cpuRatios[i]!.toFixed(2)} | ${load.toFixed(1)} |`,
  ),
  "",
  "| measure | figure | goal |",
  "|---|---|---|",
  `| deliveries/s against the bare loop, median of the ${ROUNDS} pairs | ${pct(medianRatio)} (pairs ${ratios.map(pct).join(", ")}) | ≥ 90%: ${goal(medianRatio >= 0.9)} |`,
  `| deliveries/s, median of the rounds | ${round(median(pairs.map((p) => p.pipeline.perSecond)))} (events published ${round(median(pairs.map((p) => p.pipeline.eventsPerSecond)))}/s) | ≥ 1,000/s: ${goal(median(pairs.map((p) => p.pipeline.perSecond)) >= 1000)} |`,
  `| bare loop posts/s, median of the rounds | ${round(median(pairs.map((p) => p.bare.perSecond)))} | |`,
  `| every delivery received and recorded as succeeded | ${allDelivered ? "yes" : "no"} | yes |`,
  `| CPU per delivery: main, database, other threads (ms), medians | ${ms(median(deliveryCpu.map((c) => c.main)))}, ${ms(median(deliveryCpu.map((c) => c.database)))}, ${ms(median(deliveryCpu.map((c) => c.other)))} | |`,
  `| CPU per post of the bare loop: main, other threads (ms), medians | ${ms(median(postCpu.map((c) => c.main)))}, ${ms(median(postCpu.map((c) => c.other)))} | |`,
  `| CPU of a delivery in bare POSTs, median of the pairs | ${median(cpuRatios).toFixed(2)} | |`,
  `| creation → receipt at ${LATENCY_RATE} events/s (1 endpoint, ${LATENCY_MS / 1000} s, ${latency.events} events) | p50 ${latency.p50} ms, p99 ${latency.p99} ms, max ${latency.max} ms | p50 < 20 ms: ${goal(latency.p50 < 20)}; p99 < 50 ms: ${goal(latency.p99 < 50)} |`,
  `| guarantee jobs left once every first attempt was recorded | ${guaranteeJobsLeft} | 0 |`,
  `| Agenda alone: no-op jobs scheduled for now, locked, run and removed | ${agenda.jobsPerSecond} jobs/s (${AGENDA_JOBS} jobs) | |`,
  "",
  "Design: a delivery's next attempt is one Agenda job (`webhook-attempt`, unique by the delivery id). The process that",
  "relays events sends their first attempts at once, their records held until their outcomes and then written once,",
  "finished (pending with its attempt claimed if no outcome came within 2 s), behind one job for the batch",
  "(`webhook-first-attempts`, due one lease later, naming the events) as their guarantee: removed once every first",
  "attempt of the batch is recorded, a failed one's `webhook-attempt` job inserted at its retry time first. A relay",
  "waits (250 ms at most) while more than four times the attempts in flight wait for a slot. Every other attempt is a",
  "run of its job: one lock, the record's claim and outcome, the job's save or removal.",
];
const report = lines.join("\n");
writeResults("webhook-delivery.md", report);
console.log(report);
process.exit(0);
