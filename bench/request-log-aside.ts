// A control of bench/request-log.bench.ts (BENCH_CONTROLS=1): work on the database's core while the service that
// does not record is loaded, to tell what slows the recording service. Pinned to the database's core (its first
// argument's `core`), it prints "ready", then for `seconds` either records one load's entries at `perSecond` through
// the shipped writer into the database at BENCH_MONGO_URI (the same inserts the recording service makes, into
// another database), or spins (`busy`: `duty` of that core's time, no database work). Prints its counts as one JSON line.
import { execFileSync } from "node:child_process";
import { connectDatabase } from "../src/store/database.ts";
import { RequestLogRepository } from "../src/store/request-log-repository.ts";
import { DEFAULT_REQUEST_LOG_WRITER, RequestLogWriter } from "../src/store/request-log-writer.ts";
import { loadEntry, type RequestLogLoad } from "./request-log-entries.ts";

const spec = JSON.parse(process.argv[2]!) as {
  mode: "inserts" | "busy";
  core: string;
  load: RequestLogLoad;
  perSecond: number;
  seconds: number;
  /** busy: the share of each tick spent spinning. */
  duty: number;
};
execFileSync("taskset", ["--all-tasks", "--pid", "--cpu-list", spec.core, String(process.pid)], { stdio: "ignore" });

const TICK_MS = 20;
const principal = { apiKeyId: "key_bench_aside", projectId: "bench-aside", organizationId: "org_bench_aside", livemode: false, rateLimit: 1 };

if (spec.mode === "busy") {
  process.stdout.write("ready\n");
  const until = performance.now() + spec.seconds * 1000;
  let spins = 0;
  // Yields every tick, so that the process stays responsive; the CPU is spent in between.
  while (performance.now() < until) {
    const tickEnd = Math.min(until, performance.now() + TICK_MS * spec.duty);
    while (performance.now() < tickEnd) spins++;
    await new Promise((resolve) => setTimeout(resolve, TICK_MS * (1 - spec.duty)));
  }
  process.stdout.write(`${JSON.stringify({ spins })}\n`);
} else {
  const database = await connectDatabase(process.env.BENCH_MONGO_URI!);
  const repository = new RequestLogRepository(database.db);
  await repository.ensureIndexes();
  let failures = 0;
  const writer = new RequestLogWriter(repository, { ...DEFAULT_REQUEST_LOG_WRITER, onError: () => failures++ });
  process.stdout.write("ready\n");
  const started = performance.now();
  let recorded = 0;
  for (;;) {
    const elapsed = (performance.now() - started) / 1000;
    const due = Math.floor(Math.min(elapsed, spec.seconds) * spec.perSecond);
    while (recorded < due) {
      writer.record(loadEntry(spec.load, principal));
      recorded++;
    }
    if (elapsed >= spec.seconds) break;
    await new Promise((resolve) => setTimeout(resolve, TICK_MS));
  }
  await writer.flush();
  await database.close();
  process.stdout.write(`${JSON.stringify({ recorded, failures })}\n`);
}
