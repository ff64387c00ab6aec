// Per-command CPU of the embedded server's own thread, for the commands Agenda and webhook delivery send: the
// server runs as the service runs it (a one-member replica set in a worker thread, so every write has its oplog
// entry and its retryable-write record), and each command is measured without a change stream, with Agenda's
// stream on the collection (insert, update and replace events) and with a stream of inserts only. Pre-encoded
// OP_MSG frames are pipelined over raw sockets, so the client costs almost nothing; the server thread's CPU time
// is read from /proc (Linux), which tells it apart from the client's thread and V8's helpers.
import { readdirSync, readFileSync } from "node:fs";
import net from "node:net";
import { Binary, deserialize, Long, ObjectId, serialize, type Document } from "bson";
import { type ChangeStream, type Collection, MongoClient } from "mongodb";
import { startEmbeddedMongo } from "../src/embedded-mongo/index.ts";
import { agendaJobDocument } from "./agenda-job-document.ts";

export const COMMANDS_HEADING = "## Per-command cost on the server thread";

const DB = "bench_commands";
const JOB_NAME = "bench-job";
/** What each connection has in flight, as a loaded service's pool would. */
const CONNECTIONS = 4;
const DEPTH = 8;
/** Jobs a lock batch takes (the job queue's default concurrency). */
const LOCK_BATCH = 50;
const INSERT_BATCH = 100;

/** Agenda's job document for a job scheduled now, with its _id. */
function jobDocument(n: number): Document {
  return { _id: new ObjectId(), ...agendaJobDocument(JOB_NAME, n) };
}

/** The fields Agenda's state save sets at the start of a run. */
function stateSave(): Document {
  const now = new Date();
  return {
    lockedAt: now,
    nextRunAt: null,
    lastRunAt: now,
    progress: null,
    failReason: null,
    failCount: null,
    failedAt: null,
    lastFinishedAt: null,
    lastModifiedBy: "bench:1",
  };
}

/** Agenda's due-job query (JobQueue's lock batch), with a lock deadline that every job passes. */
function dueFilter(): Document {
  const later = new Date(Date.now() + 3_600_000);
  return { name: JOB_NAME, disabled: { $ne: true }, $or: [{ lockedAt: { $eq: null }, nextRunAt: { $lte: later } }, { lockedAt: { $lte: later } }] };
}

interface Case {
  name: string;
  /** What one unit is (a command, a document of a batch...). */
  unit: string;
  /** Jobs stored before the measurement (their _ids are handed to `commands`). */
  preload: number;
  /** Units each command counts for. */
  unitsPerCommand: number;
  /** The commands, in order; `retryable` ones carry the connection's session and a transaction number. */
  commands(ids: ObjectId[], count: number): { command: Document; retryable: boolean }[];
}

const random = <T>(list: T[]): T => list[Math.floor(Math.random() * list.length)]!;

function cases(count: number): Case[] {
  return [
    {
      name: "insert, one job",
      unit: "command",
      preload: 0,
      unitsPerCommand: 1,
      commands: () =>
        Array.from({ length: count }, (_, i) => ({ command: { insert: "jobs", documents: [jobDocument(i)], ordered: true }, retryable: true })),
    },
    {
      name: `insert, ${INSERT_BATCH} jobs (JobQueue.insertUnique's batch)`,
      unit: "job",
      preload: 0,
      unitsPerCommand: INSERT_BATCH,
      commands: () =>
        Array.from({ length: Math.ceil(count / INSERT_BATCH) }, (_, b) => ({
          command: { insert: "jobs", documents: Array.from({ length: INSERT_BATCH }, (_, i) => jobDocument(b * INSERT_BATCH + i)), ordered: false },
          retryable: true,
        })),
    },
    {
      name: "findAndModify upsert (Agenda's unique save)",
      unit: "command",
      preload: 0,
      unitsPerCommand: 1,
      commands: () =>
        Array.from({ length: count }, (_, i) => {
          const fields = agendaJobDocument(JOB_NAME, i);
          return {
            command: { findAndModify: "jobs", query: { "data.n": i, name: JOB_NAME }, update: { $set: fields }, upsert: true, new: true },
            retryable: true,
          };
        }),
    },
    {
      name: "update by _id (a run's state save)",
      unit: "command",
      preload: 10_000,
      unitsPerCommand: 1,
      commands: (ids) =>
        Array.from({ length: count }, () => ({
          command: { update: "jobs", updates: [{ q: { _id: random(ids), name: JOB_NAME }, u: { $set: stateSave() } }], ordered: true },
          retryable: true,
        })),
    },
    {
      name: `update, ${LOCK_BATCH} state saves in one bulk write`,
      unit: "job",
      preload: 10_000,
      unitsPerCommand: LOCK_BATCH,
      commands: (ids) =>
        Array.from({ length: Math.ceil(count / LOCK_BATCH) }, () => ({
          command: {
            update: "jobs",
            updates: Array.from({ length: LOCK_BATCH }, () => ({ q: { _id: random(ids), name: JOB_NAME }, u: { $set: stateSave() } })),
            ordered: false,
          },
          retryable: true,
        })),
    },
    {
      name: `find of the due jobs (sort, limit ${LOCK_BATCH}, _id only)`,
      unit: "command",
      preload: 10_000,
      unitsPerCommand: 1,
      commands: () =>
        Array.from({ length: Math.ceil(count / 10) }, () => ({
          command: {
            find: "jobs",
            filter: dueFilter(),
            sort: { nextRunAt: 1, priority: -1 },
            limit: LOCK_BATCH,
            projection: { _id: 1 },
            singleBatch: true,
          },
          retryable: false,
        })),
    },
    {
      name: `update of ${LOCK_BATCH} due jobs by _id $in (a lock batch)`,
      unit: "job",
      preload: 10_000,
      unitsPerCommand: LOCK_BATCH,
      commands: (ids) =>
        Array.from({ length: Math.ceil(count / LOCK_BATCH) }, (_, b) => {
          const batch = Array.from({ length: LOCK_BATCH }, (_, i) => ids[(b * LOCK_BATCH + i) % ids.length]!);
          return {
            command: {
              update: "jobs",
              updates: [
                { q: { ...dueFilter(), _id: { $in: batch } }, u: { $set: { lockedAt: new Date(), lastModifiedBy: "bench:1" } }, multi: true },
              ],
            },
            retryable: false,
          };
        }),
    },
    {
      name: "delete by _id",
      unit: "command",
      preload: count,
      unitsPerCommand: 1,
      commands: (ids) =>
        ids
          .slice(0, count)
          .map((_id) => ({ command: { delete: "jobs", deletes: [{ q: { _id, name: JOB_NAME }, limit: 1 }], ordered: true }, retryable: true })),
    },
  ];
}

/** CPU time each thread of this process has run, in ns (Linux schedstat). */
function threadCpu(): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      out.set(tid, Number(readFileSync(`/proc/self/task/${tid}/schedstat`, "utf8").split(" ")[0]));
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/** The busiest thread other than the main one between two readings: the server's worker thread. */
function serverThreadNs(before: Map<string, number>, after: Map<string, number>): number {
  let top = 0;
  for (const [tid, ns] of after) if (tid !== String(process.pid)) top = Math.max(top, ns - (before.get(tid) ?? 0));
  return top;
}

/** Builds one OP_MSG frame carrying `command`. */
export function opMsg(command: Document, requestId: number): Buffer {
  const body = serialize(command);
  const out = Buffer.alloc(21 + body.length);
  out.writeInt32LE(out.length, 0);
  out.writeInt32LE(requestId, 4);
  out.writeInt32LE(2013, 12);
  out.set(body, 21);
  return out;
}

/** Sends one connection's frames, `DEPTH` in flight; fails on any reply that is not ok or has write errors. */
function sendAll(port: number, frames: Buffer[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    let buffered = Buffer.alloc(0);
    let sent = 0;
    let answered = 0;
    const next = () => {
      if (sent < frames.length) socket.write(frames[sent++]!);
    };
    socket.on("connect", () => {
      for (let k = 0; k < DEPTH; k++) next();
      if (frames.length === 0) socket.end(resolve);
    });
    socket.on("error", reject);
    socket.on("data", (chunk) => {
      buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
      while (buffered.length >= 4 && buffered.length >= buffered.readInt32LE(0)) {
        const size = buffered.readInt32LE(0);
        const reply = deserialize(buffered.subarray(21, size));
        buffered = buffered.subarray(size);
        if (reply.ok !== 1 || reply.writeErrors) {
          socket.destroy();
          reject(new Error(`command failed: ${JSON.stringify(reply)}`));
          return;
        }
        answered++;
        next();
      }
      if (answered === frames.length) {
        socket.destroy();
        resolve();
      }
    });
  });
}

/** Agenda's notification stream on `jobs`, read by the driver as Agenda reads it; `count` is what it has heard. */
async function openStream(jobs: Collection, insertsOnly: boolean): Promise<{ stream: ChangeStream; heard: () => number }> {
  const operationType = insertsOnly ? "insert" : { $in: ["insert", "update", "replace"] };
  const stream = jobs.watch([{ $match: { operationType } }]);
  let heard = 0;
  stream.on("change", () => heard++);
  // A stream still open when the client closes (a failed measurement) reports it: the failure itself is thrown.
  stream.on("error", () => {});
  // The stream is open once it hears a write made after opening it.
  await waitHeard(jobs, () => heard);
  return { stream, heard: () => heard };
}

/**
 * Writes marker jobs until the stream has heard one: everything written before it was read too (a stream opens
 * lazily, so a marker written before its aggregate ran is never heard).
 */
async function waitHeard(jobs: Collection, heard: () => number): Promise<void> {
  const before = heard();
  const deadline = Date.now() + 30_000;
  while (heard() === before) {
    if (Date.now() > deadline) throw new Error("the change stream heard nothing for 30 s");
    await jobs.insertOne({ name: "marker", nextRunAt: new Date() });
    for (let waited = 0; waited < 200 && heard() === before; waited += 5) await new Promise((r) => setTimeout(r, 5));
  }
}

type StreamMode = "none" | "agenda" | "inserts";

interface Measured {
  /** Server thread CPU per unit, µs. */
  serverUs: number;
  /** Units per wall-clock second. */
  rate: number;
}

async function measureCase(client: MongoClient, port: number, c: Case, count: number, mode: StreamMode): Promise<Measured> {
  const db = client.db(DB);
  await db
    .collection("jobs")
    .drop()
    .catch(() => undefined);
  const jobs = db.collection("jobs");
  // The job queue's indexes: Agenda's own, the due-job index and the unique key of insertUnique.
  await jobs.createIndex({ name: 1, priority: -1, lockedAt: 1, nextRunAt: 1, disabled: 1 }, { name: "findAndLockNextJobIndex" });
  await jobs.createIndex({ name: 1, lockedAt: 1, nextRunAt: 1, priority: -1 });
  await jobs.createIndex({ name: 1, "data.n": 1 }, { unique: true, partialFilterExpression: { name: JOB_NAME } });
  const ids: ObjectId[] = [];
  for (let start = 0; start < c.preload; start += 10_000) {
    const docs = Array.from({ length: Math.min(10_000, c.preload - start) }, (_, i) => jobDocument(1_000_000 + start + i));
    for (const d of docs) ids.push(d._id as ObjectId);
    await jobs.insertMany(docs, { ordered: false });
  }
  const stream = mode === "none" ? undefined : await openStream(jobs, mode === "inserts");
  // One session per connection; its transaction numbers follow the order that connection sends in.
  const sessions = Array.from({ length: CONNECTIONS }, () => ({ lsid: { id: new Binary(cryptoId(), 4) }, txn: 0 }));
  const perConnection: Buffer[][] = sessions.map(() => []);
  c.commands(ids, count).forEach(({ command, retryable }, i) => {
    const k = i % CONNECTIONS;
    const session = sessions[k]!;
    const full = { ...command, $db: DB, lsid: session.lsid, ...(retryable ? { txnNumber: Long.fromNumber(++session.txn) } : {}) };
    perConnection[k]!.push(opMsg(full, i + 1));
  });
  const commands = perConnection.reduce((n, f) => n + f.length, 0);
  const before = threadCpu();
  const started = performance.now();
  await Promise.all(perConnection.map((frames) => sendAll(port, frames)));
  const elapsed = (performance.now() - started) / 1000;
  // The stream's reads of these writes are part of their cost.
  if (stream) await waitHeard(jobs, stream.heard);
  const serverNs = serverThreadNs(before, threadCpu());
  await stream?.stream.close();
  const units = commands * c.unitsPerCommand;
  return { serverUs: serverNs / 1000 / units, rate: units / elapsed };
}

function cryptoId(): Buffer {
  return Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(16)));
}

/** Measures every case in each stream mode (best of `repeat`) and answers the section of the results file. */
export async function commandCostSection(count: number, repeat: number): Promise<string[]> {
  const mongo = await startEmbeddedMongo({ inWorkerThread: true, replSet: "rs0" });
  const client = new MongoClient(mongo.uri);
  const modes: StreamMode[] = ["none", "agenda", "inserts"];
  const rows: string[] = [];
  try {
    await client.connect();
    // Warm-up (JIT), not reported.
    for (const c of cases(Math.min(count, 2000))) await measureCase(client, mongo.port, c, Math.min(count, 2000), "agenda");
    for (const c of cases(count)) {
      const cells: string[] = [];
      for (const mode of modes) {
        let best: Measured | undefined;
        for (let r = 0; r < repeat; r++) {
          const m = await measureCase(client, mongo.port, c, count, mode);
          if (!best || m.serverUs < best.serverUs) best = m;
        }
        cells.push(`${best!.serverUs.toFixed(1)} µs (${Math.round(best!.rate).toLocaleString("en-US")}/s)`);
        console.error(`[commands] ${c.name}, stream ${mode}: ${cells.at(-1)} per ${c.unit}`);
      }
      rows.push(`| ${c.name} | ${c.unit} | ${cells.join(" | ")} |`);
    }
  } finally {
    await client.close();
    await mongo.stop();
  }
  return [
    COMMANDS_HEADING,
    "",
    "CPU time of the server's thread per unit (and units per second of that run), best of",
    `${repeat} runs of ${count.toLocaleString("en-US")} units: pre-encoded OP_MSG commands pipelined over ${CONNECTIONS} raw connections`,
    `(${DEPTH} in flight each), writes carrying a session and a transaction number as the driver sends them (retryable`,
    "writes), to a one-member replica set in a worker thread holding the job queue's indexes on `jobs`. Columns: no",
    "change stream open; Agenda's notification stream on `jobs` (insert, update and replace events), read by the",
    "driver in the main thread; a stream of inserts only. The stream's getMores run on the server thread and count.",
    "`npm run bench:mongo -- --commands` (bench/embedded-mongo-commands.ts).",
    "",
    "| command | unit | no stream | Agenda's stream | inserts-only stream |",
    "|---|---|---:|---:|---:|",
    ...rows,
    "",
  ];
}
