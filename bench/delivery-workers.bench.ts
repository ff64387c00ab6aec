// Webhook delivery throughput with one and with two worker processes (SVC_ROLE=worker), in one run, on the
// embedded database run as its own process. Each run records N pending deliveries at once, as API processes
// would, and measures the time until a local receiver has them all.
import "./as-npm-start.ts";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import { MongoClient } from "mongodb";
import { deliveryRecord } from "../src/webhooks/webhook-fanout.ts";
import { startDatabaseProcess, startServiceProcess, type RunningProcess } from "../test/support/processes.ts";
import { machineDescription } from "./machine.ts";

const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 6000);
const KEY = "svc_test_benchworkersbenchworkersbench01";

const received = new Set<string>();
let onReceive: (() => void) | null = null;
const receiver = http.createServer((req, res) => {
  const id = req.headers["svc-event-id"];
  req.resume();
  req.on("end", () => {
    if (typeof id === "string") received.add(id);
    res.end();
    onReceive?.();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/bench`;

const database = await startDatabaseProcess();

async function run(workerCount: number): Promise<{ perSecond: number; seconds: number }> {
  const uri = `${database.uri.replace(/\/?$/, "")}/bench_workers_${workerCount}`;
  const env = { SVC_SANDBOX_KEY: KEY, LOG_LEVEL: "warn" };
  // An API process bootstraps the project and creates the endpoint, then leaves the field to the workers.
  const api = await startServiceProcess(uri, { ...env, SVC_ROLE: "api" });
  const endpoint = (await (
    await fetch(`${api.baseUrl}/v1/webhook-endpoints`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ url: receiverUrl }),
    })
  ).json()) as { id: string };
  await api.kill();

  const workers: RunningProcess[] = [];
  for (let i = 0; i < workerCount; i++) workers.push(await startServiceProcess(uri, { ...env, SVC_ROLE: "worker", SVC_JOB_POLL_MS: "20" }));

  const client = await MongoClient.connect(uri);
  const db = client.db();
  const project = await db.collection<{ _id: string }>("projects").findOne({});
  const now = new Date();
  const events = Array.from({ length: DELIVERIES }, (_, i) => ({
    _id: `evt_bench_${workerCount}_${i}`,
    project_id: project!._id,
    livemode: false,
    type: "user.created",
    created_at: now,
    data: { object: { id: String(100_000_000 + i), object: "user" } },
    fanned_out: true,
  }));
  await db.collection("events").insertMany(events as never[]);
  received.clear();
  const started = performance.now();
  // Recorded as API processes record them: pending, unclaimed, due now.
  await db
    .collection("webhook_deliveries")
    .insertMany(events.map((event) => deliveryRecord({ _id: endpoint.id }, event, now, "unclaimed")) as never[]);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${received.size} of ${DELIVERIES} delivered in 5 minutes`)), 300_000);
    onReceive = () => {
      if (received.size >= DELIVERIES) {
        clearTimeout(timer);
        resolve();
      }
    };
  });
  const seconds = (performance.now() - started) / 1000;
  onReceive = null;
  for (const worker of workers) await worker.kill();
  await client.close();
  return { perSecond: DELIVERIES / seconds, seconds };
}

const one = await run(1);
const two = await run(2);
const report = `# Webhook delivery with one and two worker processes

Machine: ${machineDescription()}

Separate processes: the embedded MongoDB server, the workers (\`SVC_ROLE=worker\`, polling every 20 ms: the
embedded server is standalone, so there are no change streams), and this script with the receiver (answers 200
at once). Each run records ${DELIVERIES} pending deliveries of one endpoint in one insert, as API processes record
them, and measures until the receiver has every event.

| workers | deliveries | seconds | deliveries/s |
|---|---|---|---|
| 1 | ${DELIVERIES} | ${one.seconds.toFixed(2)} | ${one.perSecond.toFixed(0)} |
| 2 | ${DELIVERIES} | ${two.seconds.toFixed(2)} | ${two.perSecond.toFixed(0)} |

Two workers / one worker: ${(two.perSecond / one.perSecond).toFixed(2)}x. On 2 cores the database process, the
receiver and the workers share the same two cores, so a second worker adds little here; on separate machines the
limit is the database's write rate (two writes per delivery: the claim and the outcome).
`;
writeFileSync(new URL("./results/delivery-workers.md", import.meta.url), report);
console.log(report);
receiver.close();
await database.kill();
