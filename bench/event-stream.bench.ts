// Event streams under the webhook-delivery load: the whole service in this process, its relay publishing the load of
// bench/webhook-delivery.bench.ts (fan-out to 10 endpoints on a receiver process, delivery jobs on Agenda, the
// embedded database in a worker thread), in rounds without streams and with 100 StreamEvents streams open on the
// same process. Each stream is a call to the service's gRPC port with its sandbox key, through every interceptor;
// its clients are in a process of their own (bench/event-stream-clients.ts); all are fed by the one change stream of
// LiveEvents. Measures: every event reaching every stream, log-to-stream time (the event's creation to its arrival
// at the client), and deliveries/s with streams against the rounds without.
import "./as-npm-start.ts";
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { loadavg } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { createApp } from "../src/app.ts";
import { bootstrapDefaultProject } from "../src/bootstrap.ts";
import { startEmbeddedMongo } from "../src/embedded-mongo/index.ts";
import { connectDatabase } from "../src/store/database.ts";
import { newEventId } from "../src/domain/ids.ts";
import type { EventDocument } from "../src/store/event-repository.ts";
import { addBenchEndpoint } from "./bench-endpoint.ts";
import { benchAppOptions } from "./bench-service.ts";
import { codeRevision, machineDescription } from "./machine.ts";
import { cpuSecondsOf, threadCpuSecondsOf, threadCpuSplit } from "./process-cpu.ts";
import { writeResults } from "./results-file.ts";
import { startReceiverProcess } from "./receiver-process.ts";

const ROUND_MS = Number(process.env.BENCH_DURATION_MS ?? 8000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
/** Publishing before the rounds, unmeasured: the first round without streams ran cold code, and was the slowest. */
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 3000);
const STREAMS = 100;
const ENDPOINTS = 10;
const PUBLISHERS = 64;

const { process: receiverProcess, url: receiverUrl, takeReceipts } = await startReceiverProcess();

// The whole service in this process, as `npm start` runs it (role all): the embedded database as a one-member
// replica set in a worker thread (change streams feed the streams and wake Agenda), its Default project and sandbox
// key, its servers on ephemeral ports. Each key may hold the bench's streams (SVC_MAX_STREAMS_PER_KEY).
const mongo = await startEmbeddedMongo({ host: "127.0.0.1", inWorkerThread: true, replSet: "rs0" });
const uri = new URL(mongo.uri);
uri.pathname = "/bench_event_stream";
const database = await connectDatabase(uri.toString());
const app = await createApp(benchAppOptions(uri.toString(), database, "adm_bench_event_stream", { SVC_MAX_STREAMS_PER_KEY: String(STREAMS) }));
const { projectId, sandboxKey: newKey } = await bootstrapDefaultProject({ tenancy: app.tenancy, ...app.repositories }, {});
if (newKey === null) throw new Error("the bench's fresh database gave its Default project no new sandbox key");
const sandboxKey: string = newKey;
for (let i = 0; i < ENDPOINTS; i++) await addBenchEndpoint(app.repositories.webhookEndpoints, projectId, `${receiverUrl}/e${i}`);
const { grpcPort } = await app.listen({ http: 0, grpc: 0 });
const serverUrl = `http://127.0.0.1:${grpcPort}`;
const live = app.liveEvents;

/**
 * What the clients' process found: how many of the events every stream received, in the same order and once each
 * (none when a stream received one out of order, twice, or one no other did: `fault` says the first), and the
 * arrivals' times after creation over every stream (ms).
 */
interface StreamCheck {
  complete: number;
  p50: number;
  p99: number;
  max: number;
  fault: string | null;
}

interface StreamClients {
  /** The clients' process's CPU seconds so far. */
  cpuSeconds(): number;
  /** The number of events the stream that received the fewest has received. */
  fewest(): Promise<number>;
  /** How many of `ids` every stream received (in order, once) and the arrivals' times; forgets the round's. */
  check(ids: string[]): Promise<StreamCheck>;
  close(): Promise<void>;
}

async function openStreams(count: number, kind: Exclude<StreamKind, "none">): Promise<StreamClients> {
  // BENCH_CLIENT_NODE_ARGS: extra node options of the clients' process (--cpu-prof, to see where its time goes).
  const nodeArgs = process.env.BENCH_CLIENT_NODE_ARGS?.split(" ").filter(Boolean) ?? [];
  const child = spawn(
    process.execPath,
    [...nodeArgs, "--import", "tsx", new URL("./event-stream-clients.ts", import.meta.url).pathname, serverUrl, String(count), kind, sandboxKey],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  const lines = createInterface({ input: child.stdout! });
  const next = () => new Promise<string>((resolve) => lines.once("line", resolve));
  if ((await next()) !== "ready") throw new Error("the stream clients did not start");
  return {
    cpuSeconds: () => cpuSecondsOf(child.pid!),
    async fewest() {
      const line = next();
      child.stdin!.write("fewest\n");
      return JSON.parse(await line) as number;
    },
    async check(ids) {
      const line = next();
      child.stdin!.write(`check ${JSON.stringify(ids)}\n`);
      return JSON.parse(await line) as StreamCheck;
    },
    async close() {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.stdin!.write("close\n");
      await exited;
    },
  };
}

const published: string[] = [];
async function publish(): Promise<void> {
  const event: EventDocument = {
    _id: newEventId(),
    project_id: projectId,
    livemode: false,
    type: "transaction.completed",
    created_at: new Date(),
    data: { object: { id: "tx_1", object: "transaction", user_id: "123456789", type: "deposit", status: "completed", livemode: false } },
    fanned_out: false,
  };
  published.push(event._id);
  await app.relay.publish(event);
}
const round = (n: number, digits = 1) => Number(n.toFixed(digits));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/**
 * A round's streams: none, or STREAMS of them reading `data_json` alone (one event per message, or the events
 * waiting for the stream together, `max_events_per_message` 100) or also the deprecated Struct.
 */
type StreamKind = "none" | "json" | "batched" | "struct";

interface RoundResult {
  kind: StreamKind;
  streams: number;
  load: number;
  events: number;
  deliveriesPerSecond: number;
  delivered: number;
  /** Events that reached every stream, in the same order and once each, of those published. */
  complete?: number;
  /** The first event a stream received out of order, twice or alone (the clients' words), if any. */
  fault?: string | null;
  p50?: number;
  p99?: number;
  max?: number;
  /** The same measured at a raw LiveEvents subscription (before the stream's own work and Connect's). */
  changeStreamP50?: number;
  changeStreamP99?: number;
  /**
   * CPU milliseconds per event published: this process's main thread (the service: relay, deliveries, streams), its
   * database's worker thread, its other threads (GC helpers, libuv's pool); the stream clients', the receiver's.
   */
  serviceCpuMs: number;
  databaseCpuMs: number;
  otherThreadsCpuMs: number;
  clientsCpuMs?: number;
  receiverCpuMs: number;
  /** The service's event-loop delay while the round published, p50 and p99 in ms. */
  loopDelayP50: number;
  loopDelayP99: number;
}

/** Log-to-subscription for one raw subscription of LiveEvents: the change stream's share of log-to-stream. */
async function rawSubscription(): Promise<{ delays: number[]; close: () => void }> {
  const subscription = await live.subscribe({ projectId, livemode: false }, null);
  const delays: number[] = [];
  void (async () => {
    for await (const event of subscription) delays.push(Date.now() - event.created_at.getTime());
  })();
  return { delays, close: () => subscription.close() };
}

/**
 * BENCH_PROFILE_DIR: a CPU profile of this process's main thread for each round (`<n>-<kind>.cpuprofile`), so that
 * the rounds with streams compare with those without, event for event.
 */
const profileDir = process.env.BENCH_PROFILE_DIR;
let roundsRun = 0;
async function profiled<T>(name: string, run: () => Promise<T>): Promise<T> {
  if (!profileDir) return run();
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  try {
    return await run();
  } finally {
    const { profile } = await session.post("Profiler.stop");
    writeFileSync(`${profileDir}/${name}.cpuprofile`, JSON.stringify(profile));
    session.disconnect();
  }
}

async function runRound(kind: StreamKind): Promise<RoundResult> {
  roundsRun++;
  await clearRecords();
  return profiled(`${roundsRun}-${kind}`, () => measureRound(kind));
}

/**
 * Empties the deliveries and events of the rounds before, outside the measured spans, as the webhook-delivery bench
 * does: eighteen rounds grew them to about a million records, and the database's CPU per event and the collector's
 * work with them (the last rounds spent twice the first's), so later rounds weighed on whichever kind they fell to.
 */
async function clearRecords(): Promise<void> {
  await Promise.all([database.db.collection("webhook_deliveries").deleteMany({}), database.db.collection("events").deleteMany({})]);
  await sleep(500);
}

async function measureRound(kind: StreamKind): Promise<RoundResult> {
  const load = loadavg()[0]!;
  const withStreams = kind !== "none";
  const raw = withStreams ? await rawSubscription() : null;
  await takeReceipts();
  const streams = withStreams ? await openStreams(STREAMS, kind) : null;
  published.length = 0;
  const cpuBefore = { threads: threadCpuSecondsOf(process.pid), clients: streams?.cpuSeconds() ?? 0, receiver: cpuSecondsOf(receiverProcess.pid!) };
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: PUBLISHERS }, async () => {
      while (performance.now() - start < ROUND_MS) await publish();
    }),
  );
  loopDelay.disable();
  const expected = published.length * ENDPOINTS;
  const receipts: number[] = [];
  while (receipts.length < expected && performance.now() - start < ROUND_MS * 8) {
    for (const [, at] of await takeReceipts()) receipts.push(at);
    await sleep(100);
  }
  receipts.sort((a, b) => a - b);
  const startedAt = performance.timeOrigin + start;
  const result: RoundResult = {
    kind,
    serviceCpuMs: 0,
    databaseCpuMs: 0,
    otherThreadsCpuMs: 0,
    receiverCpuMs: 0,
    loopDelayP50: round(loopDelay.percentile(50) / 1e6),
    loopDelayP99: round(loopDelay.percentile(99) / 1e6),
    streams: streams ? STREAMS : 0,
    load,
    events: published.length,
    delivered: receipts.length,
    deliveriesPerSecond: round(receipts.length / ((receipts.at(-1)! - startedAt) / 1000)),
  };
  if (streams) {
    const deadline = performance.now() + 30_000;
    while ((await streams.fewest()) < published.length && performance.now() < deadline) await sleep(200);
  }
  // CPU up to the last arrival (deliveries and streams); the polls in between cost next to nothing.
  const threads = threadCpuSplit(process.pid, cpuBefore.threads, threadCpuSecondsOf(process.pid));
  result.serviceCpuMs = round((1000 * threads.main) / published.length, 2);
  result.databaseCpuMs = round((1000 * threads.busiest) / published.length, 2);
  result.otherThreadsCpuMs = round((1000 * threads.rest) / published.length, 2);
  result.receiverCpuMs = round((1000 * (cpuSecondsOf(receiverProcess.pid!) - cpuBefore.receiver)) / published.length, 2);
  if (streams) {
    result.clientsCpuMs = round((1000 * (streams.cpuSeconds() - cpuBefore.clients)) / published.length, 2);
    Object.assign(result, await streams.check(published));
    if (result.fault) console.error("bench: a stream's events were not every other stream's:", result.fault);
    await streams.close();
    const rawDelays = raw!.delays.sort((a, b) => a - b);
    raw!.close();
    result.changeStreamP50 = percentile(rawDelays, 50);
    result.changeStreamP99 = percentile(rawDelays, 99);
  }
  console.log(kind, result);
  return result;
}

// BENCH_STREAM_KINDS: the kinds of rounds with streams, each after a round without (default: json,batched,struct).
const kinds = (process.env.BENCH_STREAM_KINDS ?? "json,batched,struct").split(",") as Exclude<StreamKind, "none">[];
{
  const start = performance.now();
  await Promise.all(
    Array.from({ length: PUBLISHERS }, async () => {
      while (performance.now() - start < WARMUP_MS) await publish();
    }),
  );
  const expected = published.length * ENDPOINTS;
  let received = 0;
  while (received < expected && performance.now() - start < WARMUP_MS * 10) {
    received += (await takeReceipts()).length;
    await sleep(100);
  }
}
const results: RoundResult[] = [];
for (let i = 0; i < ROUNDS; i++) {
  for (const kind of kinds) {
    results.push(await runRound("none"));
    results.push(await runRound(kind));
  }
}
await app.close();
await database.close();
await mongo.stop();
receiverProcess.kill();

/**
 * What Node's HTTP/2 alone costs a server per message and stream (bench/http2-write-floor.ts, in a process of its own
 * after the rounds): the floor under the service's own cost per message and stream below.
 */
async function http2WriteFloor(): Promise<number[]> {
  const child = spawn(process.execPath, ["--import", "tsx", new URL("./http2-write-floor.ts", import.meta.url).pathname], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const line = await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once("line", resolve));
  return (JSON.parse(line) as { usPerMessage: number[] }).usPerMessage;
}
const floor = (await http2WriteFloor()).sort((a, b) => a - b);

const without = results.filter((r) => r.kind === "none");
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const goal = (ok: boolean) => (ok ? "met" : "**missed**");
const KIND_NAMES: Record<StreamKind, string> = {
  none: "none",
  json: "100, `data_json` only",
  batched: "100, `data_json` only, batched",
  struct: "100, with the Struct",
};
const goals = kinds.flatMap((kind) => {
  const rounds = results.filter((r) => r.kind === kind);
  const ratio = round((100 * mean(rounds.map((r) => r.deliveriesPerSecond))) / mean(without.map((r) => r.deliveriesPerSecond)));
  const everyEvent = rounds.every((r) => r.complete === r.events && !r.fault);
  const worstP99 = Math.max(...rounds.map((r) => r.p99!));
  return [
    `| ${KIND_NAMES[kind]}: every event reaches every stream, in order, once | ${everyEvent ? "yes, every round" : "no"} | ${goal(everyEvent)} |`,
    `| ${KIND_NAMES[kind]}: p99 log-to-stream under 100 ms | worst round ${worstP99} ms | ${goal(worstP99 < 100)} |`,
    `| ${KIND_NAMES[kind]}: deliveries/s within 10% of the rounds without (means) | ${ratio}% | ${goal(ratio >= 90)} |`,
  ];
});
// The service's main thread per event and stream: each round with streams against the round without just before it.
const costs = kinds.map((kind) => {
  const perStream = results
    .filter((r) => r.kind === kind)
    .map((r) => round((1000 * (r.serviceCpuMs - results[results.indexOf(r) - 1]!.serviceCpuMs)) / STREAMS, 2));
  return `| ${KIND_NAMES[kind]} | ${perStream.join(", ")} |`;
});
const cpu = (r: RoundResult) => `${r.serviceCpuMs} / ${r.databaseCpuMs} / ${r.otherThreadsCpuMs} / ${r.clientsCpuMs ?? "-"} / ${r.receiverCpuMs}`;
const report = [
  "# Event streams under the webhook-delivery load",
  "",
  `Machine: ${machineDescription()}; shared with other sessions' work (the 1-minute load average of each round is in its row). Code: ${codeRevision()}.`,
  "",
  `One process: the whole service as \`npm start\` runs it (role all, the embedded database as a one-member replica set in`,
  `a worker thread), its relay publishing the load of bench/webhook-delivery.bench.ts (${PUBLISHERS} publishers through`,
  `\`EventRelay.publish\`, ${ENDPOINTS} endpoints per event on a receiver process, delivery jobs on Agenda), in rounds of`,
  `${ROUND_MS / 1000} s after ${WARMUP_MS / 1000} s of publishing unmeasured, each round with ${STREAMS} \`StreamEvents\` streams open on the same process`,
  "after one without; before each round the deliveries and events of the rounds before are deleted, so that every",
  "round runs on collections of the same size. A stream is a call to the service's gRPC port with its sandbox key,",
  "through every interceptor",
  "(the key's check, the call pipeline, the request log) and its direct path for binary gRPC streams",
  "(src/rpc/grpc-server-stream.ts); its 100 clients are gRPC calls on one HTTP/2 connection from a process of their",
  "own, which reads of each message an event's id (and, once per event, its creation time) to check that every stream",
  "receives every event once and in the same order, and times each arrival; the streams read `data_json` alone",
  "(`exclude_struct_data`, as `svc listen` and the dashboard), one event per message or, batched, the events waiting",
  "for the stream together (`max_events_per_message` 100), or also the deprecated Struct (a client built before",
  `\`data_json\`). They are fed by the process's one change stream (${live.feedsOpened} opened in the whole run). Log-to-stream: the`,
  "event's creation (just before it is logged) to its arrival at the client process; log-to-subscription: the same at",
  "a raw LiveEvents subscription, the change stream's share (the rest is the service's streams and the clients'",
  "process receiving and reading 100 streams on the same cores). CPU",
  "per event: milliseconds of CPU per event published, of the service process's main thread (relay, deliveries,",
  "streams), of its embedded database's worker thread and of its other threads (GC helpers, libuv's pool), of the",
  "stream clients' process and of the webhook receiver's, from the round's start to the last arrival. Event-loop",
  "delay: the service's, while the round published. The streams are served without compression, as the service's",
  "servers serve them.",
  "`node --import tsx bench/event-stream.bench.ts` (or `npm run bench event-stream`); each run rewrites this part of",
  "the file, not the notes below it.",
  "",
  "| round | streams | load | events | deliveries/s (received of expected) | events at every stream | log-to-stream p50 / p99 / max | of which log-to-subscription p50 / p99 | CPU ms per event: service main / database / other threads / clients / receiver | event-loop delay p50 / p99 |",
  "|---|---|---|---|---|---|---|---|---|---|",
  ...results.map(
    (r, i) =>
      `| ${i + 1} | ${KIND_NAMES[r.kind]} | ${r.load.toFixed(1)} | ${r.events} | ${r.deliveriesPerSecond} (${r.delivered} of ${r.events * ENDPOINTS}) | ${r.streams ? `${r.complete} of ${r.events}` : ""} | ${r.streams ? `${r.p50} / ${r.p99} / ${r.max} ms` : ""} | ${r.streams ? `${r.changeStreamP50} / ${r.changeStreamP99} ms` : ""} | ${cpu(r)} | ${r.loopDelayP50} / ${r.loopDelayP99} ms |`,
  ),
  "",
  "| goal | figure | |",
  "|---|---|---|",
  ...goals,
  "",
  "What the streams cost the service's main thread, in µs per event and stream: each round's CPU per event against",
  "the round without streams just before it, over the 100 streams (one event to a message, that is per message and",
  "stream). Beside it, the floor: Node's HTTP/2 alone writing one 260-byte message to each of 100 streams of one",
  "connection per turn of the event loop, until its reader (a process of its own) has read them all",
  `(bench/http2-write-floor.ts, run after the rounds): ${floor.join(", ")} µs per message and stream (five rounds).`,
  "",
  "| streams | service main thread, µs per event and stream (each round) |",
  "|---|---|",
  ...costs,
  "",
  `The service process's peak resident memory over the run (its database's thread included): ${Math.round(process.resourceUsage().maxRSS / 1024)} MB.`,
].join("\n");
writeResults("event-stream.md", report);
console.log(report);
process.exit(0);
