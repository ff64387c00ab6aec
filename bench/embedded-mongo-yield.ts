// Reads of one client while another inserts request-log batches, on the embedded database as the service runs it
// (a one-member replica set in a worker thread): how long a read waits behind a batch of inserts. mongod yields
// between the batches of a write; the embedded server runs a long write in passes of 64 statements with other
// connections' commands between them. Prints, for reads alone and then reads during inserts of 500 entries (the
// request-log writer's batch), the latency of indexed finds by _id (p50, p99, max) and the entries inserted per
// second. `node --import tsx bench/embedded-mongo-yield.ts [seconds]`; prints only (no results file).
import { loadavg } from "node:os";
import { MongoClient } from "mongodb";
import type { Principal } from "../src/access/principal.ts";
import { startEmbeddedMongo } from "../src/embedded-mongo/index.ts";
import { RequestLogRepository } from "../src/store/request-log-repository.ts";
import { loadEntry } from "./request-log-entries.ts";

const SECONDS = Number(process.argv[2] ?? 5);
const BATCH = 500;
const READERS = 8;
const USERS = 1000;
type UserDoc = { _id: string; name: string };
const principal = { apiKeyId: "key_bench_yield", projectId: "bench-yield", organizationId: "org_bench_yield", livemode: false, rateLimit: 1 };

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

const mongo = await startEmbeddedMongo({ inWorkerThread: true, replSet: "rs0" });
// Separate clients: the writer's batches and the readers' finds go over connections of their own.
const writer = new MongoClient(mongo.uri);
const reader = new MongoClient(mongo.uri);
const db = writer.db("bench_yield");
const logs = new RequestLogRepository(db);
await logs.ensureIndexes();
await db.collection<UserDoc>("users").insertMany(Array.from({ length: USERS }, (_, i) => ({ _id: `usr_${i}`, name: `User ${i}` })));
const users = reader.db("bench_yield").collection<UserDoc>("users");

async function readFor(ms: number): Promise<number[]> {
  const latencies: number[] = [];
  const end = performance.now() + ms;
  await Promise.all(
    Array.from({ length: READERS }, async () => {
      while (performance.now() < end) {
        const started = performance.now();
        await users.findOne({ _id: `usr_${Math.floor(Math.random() * USERS)}` });
        latencies.push(performance.now() - started);
      }
    }),
  );
  return latencies.sort((a, b) => a - b);
}

async function insertFor(ms: number): Promise<number> {
  const end = performance.now() + ms;
  let inserted = 0;
  while (performance.now() < end) {
    await logs.insertMany(Array.from({ length: BATCH }, () => loadEntry("rest-read", principal as Principal)));
    inserted += BATCH;
  }
  return inserted;
}

await readFor(1000); // warm-up
const rows: string[] = [];
const report = (label: string, latencies: number[], inserted?: number) =>
  rows.push(
    `| ${label} | ${latencies.length} | ${percentile(latencies, 50).toFixed(2)} | ${percentile(latencies, 99).toFixed(2)} | ${(latencies.at(-1) ?? 0).toFixed(2)} | ${inserted === undefined ? "" : Math.round(inserted / SECONDS)} |`,
  );
const loadBefore = loadavg()[0]!;
report("finds alone", await readFor(SECONDS * 1000));
const [during, inserted] = await Promise.all([readFor(SECONDS * 1000), insertFor(SECONDS * 1000)]);
report(`finds during inserts of ${BATCH}`, during, inserted);
console.log(`1-minute load average ${loadBefore.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after; ${READERS} readers, ${SECONDS} s each\n`);
console.log("| run | finds | p50 ms | p99 ms | max ms | entries inserted/s |\n|---|---|---|---|---|---|");
console.log(rows.join("\n"));
await Promise.all([writer.close(), reader.close()]);
await mongo.stop();
