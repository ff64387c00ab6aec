// Event streams under the webhook-delivery load: the delivery pipeline of bench/webhook-delivery.bench.ts (relay,
// fan-out to 10 endpoints on a receiver process, delivery jobs on Agenda, the embedded database in a worker thread)
// runs in rounds without streams and with 100 StreamEvents streams open on the same process. Each stream is the
// service's own: EventsServiceImpl served by Connect's Node handler over HTTP/2 (gRPC), its clients in a process of
// their own (bench/event-stream-clients.ts), fed by the one change stream of LiveEvents. Measures: every event reaching every stream, log-to-stream time (the event's creation to its
// arrival at the client), and deliveries/s with streams against the rounds without.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import type { Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { EventsService } from "../gen/svc/v1/events_pb.ts";
import { principalKey } from "../src/access/principal.ts";
import type { Clock } from "../src/domain/clock.ts";
import { newEventId } from "../src/domain/ids.ts";
import { newUuid } from "../src/domain/random.ts";
import { LiveEvents } from "../src/events/live-events.ts";
import { EventsServiceImpl } from "../src/services/events-service.ts";
import type { EventDocument } from "../src/store/event-repository.ts";
import { addBenchEndpoint } from "./bench-endpoint.ts";
import { startWebhookDelivery } from "./delivery-pipeline.ts";
import { machineDescription } from "./machine.ts";
import { startReceiverProcess } from "./receiver-process.ts";

const ROUND_MS = Number(process.env.BENCH_DURATION_MS ?? 8000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const STREAMS = 100;
const ENDPOINTS = 10;
const PUBLISHERS = 64;

const { process: receiverProcess, url: receiverUrl, takeReceipts } = await startReceiverProcess();

const clock: Clock = () => new Date();
const onError = (error: unknown) => console.error("bench", error);
const { mongo, database, events, endpoints, jobs, webhooks, relay } = await startWebhookDelivery("bench_event_stream", { clock, onError });
const projectId = newUuid();
for (let i = 0; i < ENDPOINTS; i++) await addBenchEndpoint(endpoints, projectId, `${receiverUrl}/e${i}`);

// The streams: the service's implementation served by Connect's Node handler over HTTP/2 (gRPC), the caller's
// principal as the pipeline would have put it; their clients in a process of their own.
const live = new LiveEvents(events, { changeStreams: true, onError });
const principal = { apiKeyId: "key_bench", projectId, organizationId: newUuid(), livemode: false, rateLimit: 1_000_000 };
const asTheKey: Interceptor = (next) => (request) => {
  request.contextValues.set(principalKey, principal);
  return next(request);
};
const server = http2.createServer(
  connectNodeAdapter({
    routes: (router) => router.service(EventsService, new EventsServiceImpl({ events, live, clock }) as never, { interceptors: [asTheKey] }),
  }),
);
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

interface StreamClients {
  /** Arrivals since the last report: the event ids each stream received, and every delay in ms. */
  report(): Promise<{ counts: string[][]; delays: number[] }>;
  close(): Promise<void>;
}

async function openStreams(count: number): Promise<StreamClients> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", new URL("./event-stream-clients.ts", import.meta.url).pathname, serverUrl, String(count)],
    {
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  const lines = createInterface({ input: child.stdout! });
  const next = () => new Promise<string>((resolve) => lines.once("line", resolve));
  if ((await next()) !== "ready") throw new Error("the stream clients did not start");
  return {
    async report() {
      const line = next();
      child.stdin!.write("report\n");
      return JSON.parse(await line) as { counts: string[][]; delays: number[] };
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
    created_at: clock(),
    data: { object: { id: "tx_1", object: "transaction", user_id: "123456789", type: "deposit", status: "completed", livemode: false } },
    fanned_out: false,
  };
  published.push(event._id);
  await relay.publish(event);
}
const round = (n: number, digits = 1) => Number(n.toFixed(digits));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

interface RoundResult {
  streams: number;
  load: number;
  events: number;
  deliveriesPerSecond: number;
  delivered: number;
  /** Events that reached every stream, of those published. */
  complete?: number;
  p50?: number;
  p99?: number;
  max?: number;
  /** The same measured at a raw LiveEvents subscription (before the stream's own work and Connect's). */
  changeStreamP50?: number;
  changeStreamP99?: number;
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

async function runRound(withStreams: boolean): Promise<RoundResult> {
  const load = loadavg()[0]!;
  const raw = withStreams ? await rawSubscription() : null;
  await takeReceipts();
  const streams = withStreams ? await openStreams(STREAMS) : null;
  published.length = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: PUBLISHERS }, async () => {
      while (performance.now() - start < ROUND_MS) await publish();
    }),
  );
  const expected = published.length * ENDPOINTS;
  const receipts: number[] = [];
  while (receipts.length < expected && performance.now() - start < ROUND_MS * 8) {
    for (const [, at] of await takeReceipts()) receipts.push(at);
    await sleep(100);
  }
  receipts.sort((a, b) => a - b);
  const startedAt = performance.timeOrigin + start;
  const result: RoundResult = {
    streams: streams ? STREAMS : 0,
    load,
    events: published.length,
    delivered: receipts.length,
    deliveriesPerSecond: round(receipts.length / ((receipts.at(-1)! - startedAt) / 1000)),
  };
  if (streams) {
    const counts: Set<string>[] = Array.from({ length: STREAMS }, () => new Set());
    const delays: number[] = [];
    const deadline = performance.now() + 30_000;
    do {
      const report = await streams.report();
      report.counts.forEach((ids, i) => {
        for (const id of ids) counts[i]!.add(id);
      });
      delays.push(...report.delays);
      if (counts.every((c) => c.size >= published.length)) break;
      await sleep(200);
    } while (performance.now() < deadline);
    await streams.close();
    result.complete = published.filter((id) => counts.every((c) => c.has(id))).length;
    delays.sort((a, b) => a - b);
    result.p50 = percentile(delays, 50);
    result.p99 = percentile(delays, 99);
    result.max = delays.at(-1)!;
    const rawDelays = raw!.delays.sort((a, b) => a - b);
    raw!.close();
    result.changeStreamP50 = percentile(rawDelays, 50);
    result.changeStreamP99 = percentile(rawDelays, 99);
  }
  console.log(withStreams ? "with streams" : "without streams", result);
  return result;
}

const results: RoundResult[] = [];
for (let i = 0; i < ROUNDS; i++) {
  results.push(await runRound(false));
  results.push(await runRound(true));
}
const changeStreams = live.feedsOpened;
await live.drain();
server.close();
await Promise.all([webhooks.stop(), jobs.stop()]);
await database.close();
await mongo.stop();
receiverProcess.kill();

const without = results.filter((r) => r.streams === 0);
const withStreams = results.filter((r) => r.streams > 0);
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const ratio = round((100 * mean(withStreams.map((r) => r.deliveriesPerSecond))) / mean(without.map((r) => r.deliveriesPerSecond)));
const goal = (ok: boolean) => (ok ? "met" : "**missed**");
const everyEvent = withStreams.every((r) => r.complete === r.events);
const worstP99 = Math.max(...withStreams.map((r) => r.p99!));
const lines = [
  "# Event streams under the webhook-delivery load",
  "",
  `Machine: ${machineDescription()}; shared with other sessions' work (the 1-minute load average of each round is in its row).`,
  "",
  `One process: the delivery pipeline of bench/webhook-delivery.bench.ts (${PUBLISHERS} publishers through \`EventRelay.publish\`, ${ENDPOINTS} endpoints`,
  "per event on a receiver process, delivery jobs on Agenda, the embedded database in a worker thread), in rounds of",
  `${ROUND_MS / 1000} s alternating without streams and with ${STREAMS} \`StreamEvents\` streams open on the same process. A stream is the`,
  "service's implementation served by Connect's Node handler over HTTP/2 (gRPC, binary messages), its 100 clients",
  "on one connection from a process of their own; the streams are fed by the process's one change stream",
  `(${changeStreams} opened in the whole run). Log-to-stream: the event's creation (just before it is logged) to its arrival at the`,
  "client process; log-to-subscription: the same at a raw LiveEvents subscription, the change",
  "stream's share. `node --import tsx bench/event-stream.bench.ts` (or `npm run bench event-stream`); each run rewrites this file.",
  "",
  "| round | streams | load | events | deliveries/s (received of expected) | events at every stream | log-to-stream p50 / p99 / max | of which log-to-subscription p50 / p99 |",
  "|---|---|---|---|---|---|---|---|",
  ...results.map(
    (r, i) =>
      `| ${i + 1} | ${r.streams} | ${r.load.toFixed(1)} | ${r.events} | ${r.deliveriesPerSecond} (${r.delivered} of ${r.events * ENDPOINTS}) | ${r.streams ? `${r.complete} of ${r.events}` : ""} | ${r.streams ? `${r.p50} / ${r.p99} / ${r.max} ms` : ""} | ${r.streams ? `${r.changeStreamP50} / ${r.changeStreamP99} ms` : ""} |`,
  ),
  "",
  "| goal | figure | |",
  "|---|---|---|",
  `| every event reaches every stream | ${everyEvent ? "yes, every round" : "no"} | ${goal(everyEvent)} |`,
  `| p99 log-to-stream under 100 ms | worst round ${worstP99} ms | ${goal(worstP99 < 100)} |`,
  `| deliveries/s with streams within 10% of without (means of the rounds) | ${ratio}% | ${goal(ratio >= 90)} |`,
  "",
];
writeFileSync(new URL("./results/event-stream.md", import.meta.url), lines.join("\n"));
console.log(lines.join("\n"));
process.exit(0);
