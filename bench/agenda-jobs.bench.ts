// Agenda's own job throughput on the embedded database, as the service runs it (JobQueue: a replica set with the
// change-stream notification channel, removeOnComplete, unique keys on `data.<field>`), against a baseline measured
// in the same run: the bare insert, locking findOneAndUpdate and delete of the same documents through the driver.
// Writes bench/results/agenda.md.
import "./as-npm-start.ts";
import { loadConfig } from "../src/config.ts";
import { execSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { type Db, MongoClient } from "mongodb";
import { startEmbeddedMongo } from "../src/embedded-mongo/index.ts";
import { JobQueue } from "../src/jobs/job-queue.ts";
import { agendaJobDocument } from "./agenda-job-document.ts";
import { commandTable, countCommands } from "./command-shapes.ts";
import { machineDescription } from "./machine.ts";
import { median } from "./statistics.ts";

const JOBS = Number(process.env.BENCH_AGENDA_JOBS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** Jobs scheduled at once (each schedule is one save), as a burst of requests would. */
const SCHEDULERS = 100;
/** JobQueue's settings in the service: the defaults of SVC_JOB_POLL_MS, SVC_JOB_LOCK_MS and SVC_JOB_CONCURRENCY. */
const { jobPollMs: POLL_MS, jobLockMs: LOCK_MS, jobConcurrency: CONCURRENCY } = loadConfig({});

/** What the profiles showed and what is left (measured on the commits named; the tables above are this run's). */
const ANALYSIS = [
  "## Where the time went, and what is left",
  "",
  "The jobs/s figures move with the other load on these shared machines: compare the CPU per job, the commands per",
  "job, and each figure with the bare one of its round.",
  "",
  "- Before (c849762; `node --cpu-prof` of both threads, and each command timed inside the server): Agenda sent about",
  "  7 commands per job (the table under Before): its unique upsert, its lock (a `findAndModify` of the due-job",
  "  query), about two more lock attempts that found nothing (every change-stream notification starts a fill that",
  "  ends with a failed attempt), the saves at the start and end of the run, and the removal. Neither thread was",
  "  saturated: a fill locks one job per round trip, so a burst waited on serial round trips, and each command cost",
  "  0.3-1.6 ms in the server (BSON, retryable-write bookkeeping, the oplog and change streams, the update itself).",
  "- Changed: JobQueue gives Agenda a repository that batches these commands (`src/jobs/batched-job-repository.ts`).",
  "  The lock attempts of one job name share one batch (find the due jobs, lock them with one update stamped with a",
  "  lock time unique to this process, read back those won), of at most the definition's concurrency; the saves of",
  "  one event-loop turn are one bulk write; a finished one-time job is removed by the save that ends its run.",
  "  A process holds at most the concurrency of a name locked and wakes Agenda when half of it is free, so a",
  "  backlog is not locked whole by one process. In the embedded server an `_id $in` beside a `$or` is planned as",
  "  a lookup instead of the OR plan, and ObjectId comparisons are tested without mingo (those two took a third of",
  "  the server thread once locks were batched).",
  "- Result (tables above): commands per job from about 7 to 1.5 with unique saves (one of them the upsert",
  "  itself) and 0.6 with bulk inserts; CPU per job (both threads) from 5.3-5.6 ms to 1.8-2.2 ms. Against the bare",
  "  insert+lock+delete loop of the same round (3 commands per job): from 25-34% to 52-92% in this run (81-343% in a",
  "  run of the same code ten minutes earlier, CPU per job 0.95-2.5 ms: the load of the machine moved that much).",
  "- After (99e05fe, 2026-11-27 14:20 UTC, 2 rounds at a 1-minute load average of 13-17 from other sessions, so its",
  "  jobs/s are not comparable with the tables above): the change stream that wakes Agenda asks for inserts only, and",
  "  the database answers a waiting getMore once per event-loop turn instead of after each command: getMore per job",
  "  0.15 to 0.03 with unique saves and 0.13 to 0.02 with bulk inserts (commands per job 1.48 and 0.52). CPU per job,",
  "  both threads: 2.11 ms with unique saves, 1.34 ms with bulk inserts, 1.86 ms for the bare loop of the same run.",
  "  The due-job find of a lock batch (`_id` only) no longer projects each document through mingo: 0.70 to 0.44 ms of",
  "  server CPU per find with 10,000 jobs (`npm run bench:mongo -- --commands`, same load).",
  "- The server thread's profile during this benchmark (`node --cpu-prof`, before those changes, load 13): busy 62%",
  "  of the run. Its work is spread: one socket write per reply 7%, BSON parse and encode 5% each, the four indexes",
  "  of `jobs` (ordered-set seeks, inserts, deletes) 8-10%, the planner 4.5%, building the upserted document 4%,",
  "  change streams 5%. The database thread was not the one saturated; the other is the application's (Agenda's",
  "  Job objects, queue and events, and the driver).",
  "- Why 2,000 jobs/s is still missed here: at 1.3-2.1 ms of CPU per job (both threads) 2,000 jobs/s needs 2.6-4",
  "  cores on a 2-core machine that other sessions kept at a load average of 10-17. What is left per job is Agenda's",
  "  own work (a Job object, its sorted local queue, its setImmediate loop and debug logger, the `complete` and",
  "  `start` events), the driver's BSON, and on the database the unique save's upsert (one command per job, the",
  "  costliest command: 0.16-0.21 ms of server CPU) and the index maintenance of each lock and save.",
  "",
];

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

const mongo = await startEmbeddedMongo({ host: "127.0.0.1", inWorkerThread: true, replSet: "rs0" });
const uri = mongo.uri;
const loadBefore = loadavg()[0]!;

async function connect(monitor = false): Promise<MongoClient> {
  const client = new MongoClient(uri, { ignoreUndefined: true, monitorCommands: monitor });
  await client.connect();
  return client;
}

interface Measure {
  jobsPerSecond: number;
  /** CPU time of the whole process (the application's thread and the database's) per job, in ms. */
  cpuMsPerJob: number;
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

/** Baseline: each job inserted, locked by a findOneAndUpdate on its _id, deleted; CONCURRENCY chains at once. */
async function bare(db: Db): Promise<Measure> {
  const jobs = db.collection("bare_jobs");
  await jobs.deleteMany({});
  let next = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < JOBS) {
        const n = next++;
        const { insertedId } = await jobs.insertOne(agendaJobDocument("bench-bare", n));
        await jobs.findOneAndUpdate({ _id: insertedId, lockedAt: null }, { $set: { lockedAt: new Date() } }, { returnDocument: "after" });
        await jobs.deleteOne({ _id: insertedId });
      }
    }),
  );
  return { jobsPerSecond: JOBS / ((performance.now() - start) / 1000), cpuMsPerJob: cpuMs(cpu) / JOBS };
}

interface AgendaRound extends Measure {
  commands?: Map<string, number>;
}

/** Agenda through JobQueue: JOBS no-op jobs scheduled for now (unique by data.n), run and removed. */
/**
 * How the bench writes its jobs: `save`, Agenda's own unique save (JobQueue.schedule: one upsert per job, as KYC
 * expiry and wallet retries are scheduled); `bulk`, JobQueue.insertUnique (the inserts of one event-loop turn in
 * one command, as the ledger's steps and fan-out's delivery jobs are written).
 */
type Saves = "save" | "bulk";

async function agenda(db: Db, client: MongoClient, options: { changeStreams: boolean; saves: Saves; monitor: boolean }): Promise<AgendaRound> {
  await db.collection("jobs").deleteMany({});
  const queue = new JobQueue(db, {
    pollIntervalMs: POLL_MS,
    lockLifetimeMs: LOCK_MS,
    maxConcurrency: CONCURRENCY,
    changeStreams: options.changeStreams,
  });
  let ran = 0;
  let allRan: () => void = () => {};
  const done = new Promise<void>((resolve) => (allRan = resolve));
  queue.define<{ n: number }>("bench-noop", async () => {
    if (++ran === JOBS) allRan();
  });
  await queue.start();
  const counter = options.monitor ? countCommands(client) : null;
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < JOBS; i += SCHEDULERS) {
    await Promise.all(
      Array.from({ length: Math.min(SCHEDULERS, JOBS - i) }, (_, j) =>
        options.saves === "bulk"
          ? queue.insertUnique("bench-noop", { n: i + j }, new Date(), "n")
          : queue.schedule("bench-noop", { n: i + j }, new Date(), ["n"]),
      ),
    );
  }
  await done;
  // Removed too: the last removals follow the last runs.
  while ((await db.collection("jobs").countDocuments({ name: "bench-noop" })) > 0) await new Promise((r) => setTimeout(r, 1));
  const jobsPerSecond = JOBS / ((performance.now() - start) / 1000);
  const cpuMsPerJob = cpuMs(cpu) / JOBS;
  const commands = counter?.take();
  counter?.stop();
  await queue.stop();
  return { jobsPerSecond, cpuMsPerJob, ...(commands ? { commands } : {}) };
}

const client = await connect();
const db = client.db("bench_agenda");
await db.collection("bare_jobs").createIndex({ name: 1 });
// Warm-up (JIT, connections), not reported.
await bare(db);
await agenda(db, client, { changeStreams: true, saves: "save", monitor: false });

interface Row {
  bare: Measure;
  changeStreams: Measure;
  polling: Measure;
  bulk: Measure;
}
const rows: Row[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const row: Row = {
    bare: await bare(db),
    changeStreams: await agenda(db, client, { changeStreams: true, saves: "save", monitor: false }),
    polling: await agenda(db, client, { changeStreams: false, saves: "save", monitor: false }),
    bulk: await agenda(db, client, { changeStreams: true, saves: "bulk", monitor: false }),
  };
  console.log(`round ${r + 1}`, Object.fromEntries(Object.entries(row).map(([k, v]) => [k, [round(v.jobsPerSecond), round(v.cpuMsPerJob, 2)]])));
  rows.push(row);
}

// One more Agenda run under command monitoring (not timed): what it asks the database per job.
const monitored = await connect(true);
const profile = await agenda(monitored.db("bench_agenda"), monitored, { changeStreams: true, saves: "save", monitor: true });
const bulkProfile = await agenda(monitored.db("bench_agenda"), monitored, { changeStreams: true, saves: "bulk", monitor: true });
await monitored.close();
const loadAfter = loadavg()[0]!;
await client.close();
await mongo.stop();

const columns = ["bare", "changeStreams", "polling", "bulk"] as const;
const med = Object.fromEntries(
  columns.map((c) => [c, { jobsPerSecond: median(rows.map((r) => r[c].jobsPerSecond)), cpuMsPerJob: median(rows.map((r) => r[c].cpuMsPerJob)) }]),
) as Record<(typeof columns)[number], Measure>;
const percent = (x: number) => `${Math.round(x * 100)}%`;
const cell = (m: Measure, base: Measure) =>
  m === base
    ? `${round(m.jobsPerSecond)} jobs/s; ${round(m.cpuMsPerJob, 2)} ms CPU`
    : `${round(m.jobsPerSecond)} jobs/s (${percent(m.jobsPerSecond / base.jobsPerSecond)}); ${round(m.cpuMsPerJob, 2)} ms CPU`;
const commit = (() => {
  if (process.env.BENCH_COMMIT) return process.env.BENCH_COMMIT;
  try {
    return execSync("git rev-parse --short HEAD", { encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
})();
const lscpu = (() => {
  try {
    return execSync("lscpu | head", { encoding: "utf8", shell: "/bin/sh" }).trim();
  } catch {
    return "(lscpu not available)";
  }
})();
const nproc = (() => {
  try {
    return execSync("nproc", { encoding: "utf8" }).trim();
  } catch {
    return "?";
  }
})();

const lines = [
  "# Agenda jobs",
  "",
  `Machine: ${machineDescription()}; commit ${commit}; 1-minute load average ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after.`,
  `\`nproc\`: ${nproc}. \`lscpu | head\`:`,
  "",
  "```",
  lscpu,
  "```",
  "",
  `One process: the embedded database as the service starts it (a one-member replica set in a worker thread, in memory),`,
  `JobQueue as the service configures it (poll ${POLL_MS} ms, lock ${LOCK_MS} ms, concurrency ${CONCURRENCY}, removeOnComplete). ${JOBS} no-op jobs`,
  `are scheduled for now, ${SCHEDULERS} saves at a time, and timed from the first save until the last one has run and been removed.`,
  "The baseline, in the same run: the same documents inserted, locked by a findOneAndUpdate on their `_id` and deleted",
  `through the driver, ${CONCURRENCY} chains at once (3 commands per job). Jobs are saved either by Agenda's unique save`,
  "(`JobQueue.schedule`, one upsert per job) or by `JobQueue.insertUnique` (the inserts of one event-loop turn in one",
  "command), the way the ledger's steps and fan-out's delivery jobs are written.",
  "",
  "Each cell: jobs per second (percent of the bare figure of the same round); CPU time of the process (both threads) per job.",
  "",
  "| round | bare insert+lock+delete | Agenda, change streams, unique save | Agenda, polling only, unique save | Agenda, change streams, bulk inserts |",
  "|---|---|---|---|---|",
  ...rows.map((r, i) => `| ${i + 1} | ${columns.map((c) => cell(r[c], r.bare)).join(" | ")} |`),
  `| median | ${columns.map((c) => cell(med[c], med.bare)).join(" | ")} |`,
  "",
  `Goal: at least 2,000 jobs/s as the service runs Agenda (change streams): ${Math.max(med.changeStreams.jobsPerSecond, med.bulk.jobsPerSecond) >= 2000 ? "met" : "**missed**"} (median ${round(med.changeStreams.jobsPerSecond)} jobs/s with unique saves, ${round(med.bulk.jobsPerSecond)} jobs/s with bulk inserts).`,
  "",
  "## What Agenda asks the database",
  "",
  `Commands sent during two more runs (change streams; counted with the driver's command monitoring, not timed), for ${JOBS} jobs each.`,
  "",
  ...commandTable("Unique saves", profile.commands!, JOBS, "job"),
  ...commandTable("Bulk inserts", bulkProfile.commands!, JOBS, "job"),
];
// The figures of an earlier run (BENCH_AGENDA_BEFORE: its results file), e.g. of the code before a change, kept beside.
const beforeFile = process.env.BENCH_AGENDA_BEFORE;
if (beforeFile) {
  const before = readFileSync(beforeFile, "utf8").split("\n");
  const machine = before.find((l) => l.startsWith("Machine: "));
  const rounds = before.filter((l) => /^\|( round|---| \d+ \|)/.test(l) && !l.startsWith("| command") && l.split("|").length === 7);
  const commands = before.slice(before.findIndex((l) => l.startsWith("| command"))).filter((l) => l.startsWith("|"));
  lines.push("## Before", "", `The same benchmark on the code before this work. ${machine ?? ""}`, "", ...rounds, "", ...commands, "");
}
lines.push(...ANALYSIS);
writeFileSync(new URL("./results/agenda.md", import.meta.url), lines.join("\n"));
console.log(lines.join("\n"));
