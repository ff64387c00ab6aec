// Benchmark (not a test): ops/s of the embedded server through the official driver at 10k and 1M documents.
// Writes bench/results/embedded-mongo.md. Run: npm run bench:mongo [-- --sizes 10000,1000000 --seconds 3]
import { cpus, totalmem } from "node:os";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { serialize, type Document } from "bson";
import { MongoClient, ObjectId, type Collection } from "mongodb";
import { startEmbeddedMongo } from "../src/embedded-mongo/index.ts";

interface Args {
  /** Run the server in a worker thread (another core) instead of on the benchmark's own event loop. */
  worker: boolean;
  sizes: number[];
  seconds: number;
  concurrency: number;
  out: string;
}

function parseArgs(): Args {
  const argv = process.argv.slice(2);
  const get = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  return {
    worker: argv.includes("--worker"),
    sizes: (get("--sizes") ?? "10000,1000000").split(",").map(Number),
    seconds: Number(get("--seconds") ?? 3),
    concurrency: Number(get("--concurrency") ?? 16),
    out: get("--out") ?? "bench/results/embedded-mongo.md",
  };
}

interface BenchDoc {
  _id: ObjectId;
  email: string;
  n: number;
  counter: number;
  name: string;
  createdAt: Date;
}

function makeDoc(i: number): BenchDoc {
  return { _id: new ObjectId(), email: `user${i}@example.com`, n: i, counter: 0, name: `User number ${i}`, createdAt: new Date() };
}

async function populate(coll: Collection<BenchDoc>, size: number): Promise<ObjectId[]> {
  const ids: ObjectId[] = [];
  const batch = 10_000;
  for (let start = 0; start < size; start += batch) {
    const docs = Array.from({ length: Math.min(batch, size - start) }, (_, k) => makeDoc(start + k));
    for (const d of docs) ids.push(d._id);
    await coll.insertMany(docs, { ordered: false });
  }
  return ids;
}

/** Machine-wide busy and total CPU ticks so far (Linux /proc/stat), to tell how much other processes ran. */
function machineTicks(): { busy: number; total: number } | undefined {
  try {
    const fields = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
    const idle = fields[3] + (fields[4] ?? 0);
    const total = fields.reduce((a, b) => a + b, 0);
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
}

interface Measured {
  /** Operations per wall-clock second. */
  value: number;
  /** Operations per second of CPU used by this process (all its threads): less sensitive to other load. */
  perCpuSecond: number;
  /** Share of the machine's CPU used by other processes meanwhile. */
  foreign: number;
}

/** Runs a measurement, also recording this process's CPU time and the machine's load from other processes. */
async function withForeignLoad(run: () => Promise<{ rate: number; count: number }>): Promise<Measured> {
  const ticksBefore = machineTicks();
  const cpuBefore = process.cpuUsage();
  const { rate, count } = await run();
  const ticksAfter = machineTicks();
  const cpu = process.cpuUsage(cpuBefore);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const perCpuSecond = count / cpuSeconds;
  if (!ticksBefore || !ticksAfter) return { value: rate, perCpuSecond, foreign: NaN };
  const hz = 100; // USER_HZ: /proc/stat counts in 1/100 s
  const total = ticksAfter.total - ticksBefore.total;
  return { value: rate, perCpuSecond, foreign: Math.max(0, (ticksAfter.busy - ticksBefore.busy - cpuSeconds * hz) / total) };
}

/** Runs `op` from `concurrency` concurrent loops for `seconds`; returns operations per second. */
async function measureDriver(seconds: number, concurrency: number, op: (i: number) => Promise<unknown>): Promise<{ rate: number; count: number }> {
  // Short warm-up so JIT and connection pool are ready.
  const warmEnd = Date.now() + 300;
  let i = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (Date.now() < warmEnd) await op(i++);
  }));
  let count = 0;
  const start = process.hrtime.bigint();
  const end = Date.now() + seconds * 1000;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (Date.now() < end) {
      await op(i++);
      count++;
    }
  }));
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  return { rate: count / elapsed, count };
}

function machine(): string {
  let model = cpus()[0]?.model ?? "unknown";
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8").split("\n").find((l) => l.startsWith("model name"));
    if (line) model = line.split(":")[1].trim();
  } catch {
    // not Linux: keep os.cpus()'s model
  }
  return [
    `- CPU: ${model}`,
    `- Cores: ${cpus().length}`,
    `- Memory: ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `- Node.js: ${process.version}`,
    `- Date: ${new Date().toISOString()}`,
  ].join("\n");
}

const OPERATIONS = ["insertOne", "findOne by _id", "findOne by unique email", "updateOne by _id ($inc)", "findOneAndUpdate by email ($inc, after)"] as const;

/** Builds one OP_MSG frame carrying `command`. */
function opMsg(command: Document, requestId: number): Buffer {
  const body = serialize(command);
  const frame = Buffer.alloc(21 + body.length);
  frame.writeInt32LE(frame.length, 0);
  frame.writeInt32LE(requestId, 4);
  frame.writeInt32LE(2013, 12);
  frame.set(body, 21);
  return frame;
}

/**
 * Server capacity without the driver: pre-encoded OP_MSG requests pipelined over raw sockets, `depth` in flight per
 * connection. The client side costs almost nothing, so this shows what the server itself sustains.
 */
async function measureRawWire(port: number, seconds: number, request: (i: number) => Buffer, connections = 4, depth = 8): Promise<{ rate: number; count: number }> {
  let count = 0;
  let i = 0;
  const end = Date.now() + seconds * 1000;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: connections }, () =>
      new Promise<void>((resolve, reject) => {
        const socket = net.connect(port, "127.0.0.1");
        let buffered = Buffer.alloc(0);
        let inFlight = 0;
        const sendOne = () => {
          inFlight++;
          socket.write(request(i++));
        };
        socket.on("connect", () => {
          for (let k = 0; k < depth; k++) sendOne();
        });
        socket.on("error", reject);
        socket.on("data", (chunk) => {
          buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
          while (buffered.length >= 4 && buffered.length >= buffered.readInt32LE(0)) {
            buffered = buffered.subarray(buffered.readInt32LE(0));
            inFlight--;
            count++;
            if (Date.now() < end) sendOne();
          }
          if (inFlight === 0) {
            socket.destroy();
            resolve();
          }
        });
      }),
    ),
  );
  return { rate: count / (Number(process.hrtime.bigint() - start) / 1e9), count };
}

type Mode = "same thread" | "worker thread";

/** Share of the machine other processes used during each measurement (the build machine is shared). */
const foreignLoad: number[] = [];

async function runMode(args: Args, mode: Mode, size: number, results: Map<string, number>): Promise<void> {
  const server = await startEmbeddedMongo({ inWorkerThread: mode === "worker thread" });
  const client = new MongoClient(server.uri, { maxPoolSize: args.concurrency });
  try {
    await client.connect();
    const db = client.db("bench");
    const coll = db.collection<BenchDoc>("users");
    await coll.createIndex({ email: 1 }, { unique: true });
    const t0 = Date.now();
    const ids = await populate(coll, size);
    console.error(`[${mode}] populated ${size} documents in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const rand = () => Math.floor(Math.random() * size);
    let next = size;
    const record = (op: string, measured: Measured) => {
      results.set(`${mode}|${op}|${size}`, measured.value);
      results.set(`${mode}|${op}|${size}|cpu`, measured.perCpuSecond);
      foreignLoad.push(measured.foreign);
      console.error(
        `[${mode}] ${size.toLocaleString("en-US")} docs  ${op}: ${Math.round(measured.value)} ops/s, ${Math.round(measured.perCpuSecond)} per CPU-second (other processes: ${(measured.foreign * 100).toFixed(0)}% of the machine)`,
      );
    };
    const measure = (op: () => Promise<unknown>) => withForeignLoad(() => measureDriver(args.seconds, args.concurrency, op));
    record("insertOne", await measure(() => coll.insertOne(makeDoc(next++))));
    record("findOne by _id", await measure(() => coll.findOne({ _id: ids[rand()] })));
    record("findOne by unique email", await measure(() => coll.findOne({ email: `user${rand()}@example.com` })));
    record("updateOne by _id ($inc)", await measure(() => coll.updateOne({ _id: ids[rand()] }, { $inc: { counter: 1 } })));
    record(
      "findOneAndUpdate by email ($inc, after)",
      await measure(() => coll.findOneAndUpdate({ email: `user${rand()}@example.com` }, { $inc: { counter: 1 } }, { returnDocument: "after" })),
    );
    if (mode === "worker thread") {
      const raw = (op: string, command: (i: number) => Document) =>
        withForeignLoad(() => measureRawWire(server.port, args.seconds, (i) => opMsg({ ...command(i), $db: "bench" }, i))).then((v) => record(`raw wire: ${op}`, v));
      await raw("insertOne", () => ({ insert: "users", documents: [makeDoc(next++)] }));
      await raw("findOne by _id", () => ({ find: "users", filter: { _id: ids[rand()] }, limit: 1, singleBatch: true }));
      await raw("findOne by unique email", () => ({ find: "users", filter: { email: `user${rand()}@example.com` }, limit: 1, singleBatch: true }));
      await raw("updateOne by _id ($inc)", () => ({ update: "users", updates: [{ q: { _id: ids[rand()] }, u: { $inc: { counter: 1 } } }] }));
      await raw("findOneAndUpdate by email ($inc, after)", () => ({ findAndModify: "users", query: { email: `user${rand()}@example.com` }, update: { $inc: { counter: 1 } }, new: true }));
    }
  } finally {
    await client.close();
    await server.stop();
  }
}

function table(title: string, rowsFor: string[], keyOf: (op: string, size: number) => string, results: Map<string, number>, sizes: number[]): string[] {
  const header = `| ${title} | ${sizes.map((s) => `${s.toLocaleString("en-US")} docs`).join(" | ")} |${sizes.length > 1 ? " last / first |" : ""}`;
  const sep = `|---|${sizes.map(() => "---:").join("|")}|${sizes.length > 1 ? "---:|" : ""}`;
  const rows = rowsFor.map((op) => {
    const values = sizes.map((s) => results.get(keyOf(op, s)) ?? NaN);
    const ratio = sizes.length > 1 ? ` ${((values[values.length - 1] / values[0]) * 100).toFixed(0)}% |` : "";
    return `| ${op} | ${values.map((v) => Math.round(v).toLocaleString("en-US")).join(" | ")} |${ratio}`;
  });
  return [header, sep, ...rows];
}

const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

async function main(): Promise<void> {
  const args = parseArgs();
  const results = new Map<string, number>();
  const modes: Mode[] = args.worker ? ["worker thread"] : ["same thread", "worker thread"];
  for (const size of args.sizes) for (const mode of modes) await runMode(args, mode, size, results);

  const sections: string[] = [];
  for (const mode of modes) {
    const where = mode === "same thread" ? "same event loop as the driver (default)" : "worker thread (`inWorkerThread: true`)";
    sections.push(`### Official driver, server on the ${where}: ops/s`, "");
    sections.push(...table("operation", [...OPERATIONS], (op, size) => `${mode}|${op}|${size}`, results, args.sizes), "");
    sections.push(`### Official driver, server on the ${where}: ops per CPU-second of the process (driver + server)`, "");
    sections.push(...table("operation", [...OPERATIONS], (op, size) => `${mode}|${op}|${size}|cpu`, results, args.sizes), "");
  }
  sections.push("### Server alone: raw OP_MSG, pipelined (4 connections x 8 in flight), server in a worker thread: ops/s", "");
  sections.push(...table("operation", [...OPERATIONS], (op, size) => `worker thread|raw wire: ${op}|${size}`, results, args.sizes), "");
  sections.push("### Server alone: ops per CPU-second of the process (server thread + the light raw client)", "");
  sections.push(...table("operation", [...OPERATIONS], (op, size) => `worker thread|raw wire: ${op}|${size}|cpu`, results, args.sizes), "");
  const report = [
    "# Embedded MongoDB server benchmark",
    "",
    "Operations per second. Driver figures go through the official `mongodb` driver running in the benchmark's",
    `process, ${args.concurrency} concurrent operations, ${args.seconds} s per measurement after a 0.3 s warm-up.`,
    "Documents: `{_id: ObjectId, email (unique index), n, counter, name, createdAt}`; lookups pick random existing keys.",
    "Produced by `npm run bench:mongo` (bench/embedded-mongo.ts).",
    "",
    "## Machine",
    "",
    machine(),
    "",
    "## Results (ops/s)",
    "",
    `Other processes on the machine used on average ${(avg(foreignLoad) * 100).toFixed(0)}% (at most ${(Math.max(...foreignLoad) * 100).toFixed(0)}%) of its CPU during the measurements;`,
    "figures taken while the machine is shared understate the server.",
    "",
    ...sections,
  ].join("\n");
  mkdirSync(path.dirname(args.out), { recursive: true });
  writeFileSync(args.out, report);
  console.log(report);
}

await main();
