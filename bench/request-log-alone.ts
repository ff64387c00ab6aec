// The recording path alone, in a process of its own, outside any request: the entries of one load's calls built
// by the pipeline's function at `perSecond` (the rate the load reached, so that batches are as large as under it),
// handed to a writer as the app's (its shipped batching) and written to the database at BENCH_MONGO_URI. Prints
// one JSON line: this process's CPU per entry (what recording costs the service: the entry, the batching, the
// driver's encoding) and the database process's (BENCH_DB_PID: the inserts and their index maintenance), after a
// warm-up of the same path (and less the CPU of the pacing alone), and how many entries the writer dropped (none, unless the database fell behind).
import { connectDatabase } from "../src/store/database.ts";
import { RequestLogRepository } from "../src/store/request-log-repository.ts";
import { DEFAULT_REQUEST_LOG_WRITER, RequestLogWriter } from "../src/store/request-log-writer.ts";
import { cpuSecondsOf as cpuSeconds } from "./process-cpu.ts";
import { loadEntry, type RequestLogLoad } from "./request-log-entries.ts";

const spec = JSON.parse(process.argv[2]!) as { load: RequestLogLoad; perSecond: number; seconds: number };
const databasePid = Number(process.env.BENCH_DB_PID);
const database = await connectDatabase(process.env.BENCH_MONGO_URI!);
const repository = new RequestLogRepository(database.db);
await repository.ensureIndexes();
let failures = 0;
const writer = new RequestLogWriter(repository, { ...DEFAULT_REQUEST_LOG_WRITER, onError: () => failures++ });
const principal = { apiKeyId: "key_bench_alone", projectId: "bench-alone", organizationId: "org_bench_alone", livemode: false, rateLimit: 1 };

const TICK_MS = 20;
let next = 0;
function recordOne(): void {
  writer.record(loadEntry(spec.load, principal));
  next++;
}

/**
 * Records entries at `perSecond` for `seconds`, a tick's worth every few milliseconds as calls end, then writes
 * the rest; with `idle`, ticks without entries (the pacing's own CPU, subtracted from the measure).
 */
async function record(seconds: number, perSecond: number, idle = false): Promise<number> {
  const first = next;
  const started = performance.now();
  for (;;) {
    const elapsed = (performance.now() - started) / 1000;
    const due = first + Math.floor(Math.min(elapsed, seconds) * perSecond);
    while (next < due) idle ? next++ : recordOne();
    if (elapsed >= seconds) break;
    await new Promise((resolve) => setTimeout(resolve, TICK_MS));
  }
  await writer.flush();
  return next - first;
}

/** CPU seconds of this process and of the database's during `run`. */
async function cpuOf(run: () => Promise<number>): Promise<{ count: number; own: number; database: number }> {
  const ownBefore = process.cpuUsage();
  const databaseBefore = cpuSeconds(databasePid);
  const count = await run();
  const own = process.cpuUsage(ownBefore);
  return { count, own: (own.user + own.system) / 1e6, database: cpuSeconds(databasePid) - databaseBefore };
}

// The warm-up: 20,000 entries in 8 s (the most a writer takes in without dropping on this machine), so that the path is
// compiled as in a service that has been running.
await record(8, 2500);
const pacing = await cpuOf(() => record(spec.seconds, spec.perSecond, true));
const recorded = await cpuOf(() => record(spec.seconds, spec.perSecond));
await database.close();
const perEntry = (seconds: number) => (Math.max(0, seconds) * 1e6) / recorded.count;
process.stdout.write(
  `${JSON.stringify({
    entries: recorded.count,
    failures,
    serviceMicrosPerEntry: perEntry(recorded.own - pacing.own),
    databaseMicrosPerEntry: perEntry(recorded.database - pacing.database),
  })}\n`,
);
