// A retry storm: 10,000 deliveries fail across 100 endpoints and come back as Agenda jobs on a short retry
// schedule (SVC_WEBHOOK_RETRY_SCHEDULE, 1 s by default here). The delivery pipeline is the service's (relay,
// fan-out with first attempts sent at once, one `webhook-attempt` job per retried delivery) over the embedded database as
// `npm start` runs it (a one-member replica set in a worker thread, in memory). Measures, for every retry: whether it
// ran, how late after its due time (the `next_attempt_at` its failed attempt recorded), and whether any attempt ran
// twice or overlapped another of the same delivery. Writes the top of bench/results/retry-storm.md; the reading
// written by hand below it is kept.
//
// The receiver is a fake sender inside the process (answering 503 after SEND_MS): the measure is the scheduling,
// not HTTP. Every other event's deliveries succeed at their first attempt, so no endpoint reaches 20 failures in a
// row and gets disabled (which would settle its deliveries instead of retrying them).
import "./as-npm-start.ts";
import { loadavg } from "node:os";
import { parseDuration } from "../src/config.ts";
import type { Clock } from "../src/domain/clock.ts";
import { newEventId } from "../src/domain/ids.ts";
import { newUuid } from "../src/domain/random.ts";
import type { EventDocument } from "../src/store/event-repository.ts";
import type { AttemptSender } from "../src/webhooks/delivery-worker.ts";
import { addBenchEndpoint } from "./bench-endpoint.ts";
import { startWebhookDelivery } from "./delivery-pipeline.ts";
import { commandTable } from "./command-shapes.ts";
import { machineDescription } from "./machine.ts";
import { threadCpuSecondsOf, threadCpuSplit } from "./process-cpu.ts";
import { writeResults } from "./results-file.ts";

const ENDPOINTS = 100;
/** Failing deliveries: FAILING / ENDPOINTS failing events, each beside a succeeding one. */
const FAILING = Number(process.env.BENCH_STORM_DELIVERIES ?? 10_000);
/** Failed attempts of each failing delivery before its next one succeeds (retries per failing delivery). */
const FAILURES = Number(process.env.BENCH_STORM_FAILURES ?? 1);
const SCHEDULE = (process.env.SVC_WEBHOOK_RETRY_SCHEDULE ?? "1s,1s,1s,1s,1s,1s").split(",").map((d) => parseDuration(d.trim()));
const SEND_MS = 5;
const PUBLISHERS = 16;
const TIMEOUT_MS = Number(process.env.BENCH_STORM_TIMEOUT_MS ?? 300_000);
const clock: Clock = () => new Date();

/** Every attempt the sender saw: delivery key (endpoint and event), attempt number, when it started. */
const attempts: { key: string; attempt: number; at: number }[] = [];
const inFlight = new Set<string>();
let overlaps = 0;
const failingEvents = new Set<string>();
const sender: AttemptSender = async (endpoint, event, attempt) => {
  const key = `${endpoint._id}|${event._id}`;
  attempts.push({ key, attempt, at: Date.now() });
  if (inFlight.has(key)) overlaps += 1;
  inFlight.add(key);
  await new Promise((resolve) => setTimeout(resolve, SEND_MS));
  inFlight.delete(key);
  const fails = failingEvents.has(event._id) && attempt <= FAILURES;
  return fails
    ? {
        responseStatus: 503,
        error: "http_503",
        durationMs: SEND_MS,
        timings: { dnsMs: null, connectMs: 0, tlsMs: null, firstByteMs: SEND_MS },
        errorDetail: null,
      }
    : {
        responseStatus: 200,
        error: null,
        durationMs: SEND_MS,
        timings: { dnsMs: null, connectMs: 0, tlsMs: null, firstByteMs: SEND_MS },
        errorDetail: null,
      };
};

const { mongo, database, db, endpoints, deliveries, jobs, webhooks, relay, commands, written } = await startWebhookDelivery("bench_retry_storm", {
  clock,
  onError: (error) => console.error("webhook delivery", error),
  retryScheduleMs: SCHEDULE,
  sender,
});

/** When each retry was due: the next_attempt_at its failed attempt recorded, by delivery id and attempt number. */
const dueAt = new Map<string, number>();
const recordAttemptsEach = deliveries.recordAttemptsEach.bind(deliveries);
// Looked up at each batch of failed attempts (none has run yet: nothing is published), so the wrapper sees every one.
deliveries.recordAttemptsEach = async (outcomes) => {
  const recorded = await recordAttemptsEach(outcomes);
  outcomes.forEach(({ id, attempt, outcome }, i) => {
    if (recorded[i] && outcome.next_attempt_at) dueAt.set(`${id}#${attempt + 1}`, outcome.next_attempt_at.getTime());
  });
  return recorded;
};
const projectId = newUuid();
for (let i = 0; i < ENDPOINTS; i++) await addBenchEndpoint(endpoints, projectId, `https://receiver-${i}.example.com/hook`);

function event(failing: boolean): EventDocument {
  const id = newEventId();
  if (failing) failingEvents.add(id);
  return {
    _id: id,
    project_id: projectId,
    livemode: false,
    type: "transaction.completed",
    created_at: clock(),
    data: { object: { id: "tx_1", object: "transaction", status: "completed", amount_usd: 2500, livemode: false } },
    fanned_out: false,
  };
}

commands?.take();
written?.take();
const loadBefore = loadavg()[0]!;
const failingEventCount = Math.ceil(FAILING / ENDPOINTS);
const toPublish = Array.from({ length: failingEventCount * 2 }, (_, i) => event(i % 2 === 0));
const started = performance.now();
const stormCpu = threadCpuSecondsOf(process.pid);
const monotonicStartUs = process.hrtime.bigint() / 1000n;
await Promise.all(
  Array.from({ length: PUBLISHERS }, async () => {
    for (let next = toPublish.pop(); next; next = toPublish.pop()) await relay.publish(next);
  }),
);
const publishedMs = performance.now() - started;
const total = failingEventCount * 2 * ENDPOINTS;
const deliveriesCollection = db.collection<{ _id: string; status: string; endpoint_id: string; event_id: string }>("webhook_deliveries");
while (performance.now() - started < TIMEOUT_MS) {
  if ((await deliveriesCollection.countDocuments({ status: "succeeded" })) === total) break;
  await new Promise((resolve) => setTimeout(resolve, 250));
}
const elapsedMs = performance.now() - started;
const loadAfter = loadavg()[0]!;
const cpu = threadCpuSplit(process.pid, stormCpu, threadCpuSecondsOf(process.pid));
// The span of the storm on the clock of `node --cpu-prof` profiles (µs), to read them over it alone.
console.log("storm", { monotonicUs: [monotonicStartUs, process.hrtime.bigint() / 1000n] });
// The count of succeeded deliveries polled above is among them (`aggregate webhook_deliveries`).
if (commands) console.log(commandTable("Commands of the storm", commands.take(), total, "delivery").join("\n"));
if (written) console.log(commandTable("Documents written in the storm", written.take(), total, "delivery").join("\n"));
const notSucceeded = await deliveriesCollection.countDocuments({ status: { $ne: "succeeded" } });
const records = await deliveriesCollection.find({}, { projection: { endpoint_id: 1, event_id: 1 } }).toArray();
await Promise.all([webhooks.stop(), jobs.stop()]);
await database.close();
await mongo.stop();

// Join the attempts the sender saw with the due times the records were given.
const idOfKey = new Map(records.map((r) => [`${r.endpoint_id}|${r.event_id}`, r._id]));
const seen = new Set<string>();
let duplicates = 0;
const lateness: number[] = [];
for (const { key, attempt, at } of attempts) {
  const id = idOfKey.get(key)!;
  const name = `${id}#${attempt}`;
  if (seen.has(name)) duplicates += 1;
  seen.add(name);
  const due = dueAt.get(name);
  if (attempt > 1 && due !== undefined) lateness.push(at - due);
}
lateness.sort((a, b) => a - b);
const expectedRetries = failingEventCount * ENDPOINTS * FAILURES;
const percentile = (p: number) => lateness[Math.min(lateness.length - 1, Math.floor((p / 100) * lateness.length))] ?? Number.NaN;
const withinTwoSeconds = lateness.filter((ms) => ms <= 2000).length;
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const buckets = [0, 250, 500, 1000, 2000, 5000, 10_000, 30_000, Number.POSITIVE_INFINITY];
const histogram = buckets.slice(1).map((hi, i) => {
  const lo = buckets[i]!;
  const count = lateness.filter((ms) => ms >= lo && ms < hi).length;
  return `| ${lo} ms to ${Number.isFinite(hi) ? `${hi} ms` : "more"} | ${count} | ${((100 * count) / Math.max(1, lateness.length)).toFixed(1)}% |`;
});
const early = lateness.filter((ms) => ms < 0).length;
const goal = (ok: boolean) => (ok ? "met" : "**missed**");
const cpuPerAttempt = (seconds: number) => ((1000 * seconds) / Math.max(1, attempts.length)).toFixed(3);

const lines = [
  "# Retry storm",
  "",
  `Machine: ${machineDescription()}; 1-minute load average ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after (other work shared the cores).`,
  "",
  "One process: the service's delivery pipeline (relay, fan-out sending first attempts at once behind one guarantee job",
  "per batch, one `webhook-attempt` Agenda job per retry, JobQueue as `src/app.ts` configures it: poll 1 s, lock 60 s,",
  "concurrency 50 + 256) over the",
  "embedded database in a worker thread (a one-member replica set, in memory; Agenda wakes through its change stream).",
  `${failingEventCount * 2} events to ${ENDPOINTS} endpoints (${total} deliveries), published by ${PUBLISHERS} publishers; every other event's`,
  `deliveries fail their first ${FAILURES} attempt(s) with a 503 (${expectedRetries} failing deliveries' retries), the others succeed at once`,
  "(so that no endpoint reaches 20 failures in a row and is disabled). The receiver is a fake sender in the process",
  `answering after ${SEND_MS} ms: what is measured is the scheduling. Retry schedule: ${SCHEDULE.map((ms) => `${ms / 1000} s`).join(", ")}`,
  "(SVC_WEBHOOK_RETRY_SCHEDULE). A retry's lateness: when the sender was called minus the `next_attempt_at` recorded",
  "by the failed attempt before it.",
  "",
  "| measure | figure | goal |",
  "|---|---|---|",
  `| events published | ${failingEventCount * 2} in ${seconds(publishedMs)} | |`,
  `| retries run | ${lateness.length} of ${expectedRetries} | all: ${goal(lateness.length === expectedRetries)} |`,
  `| deliveries not succeeded at the end | ${notSucceeded} of ${total} (after ${seconds(elapsedMs)}) | 0 |`,
  `| lateness p50 / p90 / p99 / max | ${seconds(percentile(50))} / ${seconds(percentile(90))} / ${seconds(percentile(99))} / ${seconds(lateness.at(-1) ?? Number.NaN)} | |`,
  `| retries within 2 s of their due time | ${withinTwoSeconds} (${((100 * withinTwoSeconds) / Math.max(1, lateness.length)).toFixed(1)}%) | all: ${goal(withinTwoSeconds === expectedRetries)} |`,
  `| retries run before their due time | ${early} | 0 |`,
  `| attempts run twice (same delivery, same attempt number) | ${duplicates} | 0: ${goal(duplicates === 0)} |`,
  `| attempts overlapping another of the same delivery | ${overlaps} | 0: ${goal(overlaps === 0)} |`,
  `| CPU per attempt (${attempts.length} attempts): main thread, database thread, other threads | ${cpuPerAttempt(cpu.main)} ms, ${cpuPerAttempt(cpu.busiest)} ms, ${cpuPerAttempt(cpu.rest)} ms | |`,
  "",
  "Lateness of the retries:",
  "",
  "| lateness | retries | share |",
  "|---|---|---|",
  ...histogram,
];
writeResults("retry-storm.md", lines.join("\n"));
console.log(lines.join("\n"));
process.exit(0);
