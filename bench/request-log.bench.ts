// The cost of the request log on the rest-read and users-create loads. Every part runs in its own process: the
// embedded database (src/embedded-mongo/cli.ts), three Svc API services (bench/withdrawals-service.ts), one
// recording every call, one not, and one recording without storing, each over its own database of that server, and
// the load generator (bench/request-log-load.ts), which loads them in turn within each round (each of their
// orders once every six rounds), each run right after a warm-up of its own; the services start in an order that
// rotates every round.
// Measured per request: requests per second, the service process's CPU and the database process's CPU. Goal: at
// most 5% more cost for the service with recording. Then the recording path alone (bench/request-log-alone.ts),
// its CPU per entry in its own process and in the database's. Writes bench/results/request-log.md.
//
// The database runs on a core of its own, the services and the load generator on the other (BENCH_PIN=0: all
// anywhere), as a deployment's MongoDB has its own machine. On two cores shared as the scheduler places four
// processes, the loop is CPU-bound as a whole: what the database's inserts take counts as the service's cost.
import { type ChildProcess, execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { MongoClient } from "mongodb";
import { formatLoad, type LoadResult } from "./http-load.ts";
import { codeRevision, machineDescription, machineTools } from "./machine.ts";
import { cpuSecondsOf as cpuSeconds } from "./process-cpu.ts";
import { nodeArgsFrom, runToCompletion, startProcess, stopProcess } from "./processes.ts";
import { SERVICE_NODE_OPTIONS } from "./service-node-options.ts";
import { median, medianInterval } from "./statistics.ts";

const CONCURRENCY = 32;
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const WARM_UP_MS = 3000;
// Eighteen rounds, each variant's six orders three times (a multiple of six keeps the orders balanced). A round's
// pair of fresh services differs by several points either way whatever records, and runs of six rounds of the same
// code put the median 2 to 4 points apart: a verdict at a 5% goal needs the median of many more rounds.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 18);
/** Time left after a run for the writer's last batch (written at most 200 ms after its first entry) to land. */
const SETTLE_MS = 400;
const ALONE_SECONDS = 10;
/** The database's inserts alone: full batches into a log of INSERTS_PRELOAD entries, measured over INSERTS_ENTRIES. */
const INSERTS_PRELOAD = 100_000;
const INSERTS_ENTRIES = 50_000;
const GOAL = 0.05;
const KEY = "svc_test_benchrequestlogbenchrequestlog1";
const PINNED = process.env.BENCH_PIN !== "0";
const DATABASE_CORE = "1";
const SERVICES_CORE = "0";
/**
 * Controls (BENCH_CONTROLS=1): the service that does not record, loaded again while work runs on the database's
 * core, to tell whether the recording service's extra CPU follows the database's work (bench/request-log-aside.ts).
 */
const CONTROLS = process.env.BENCH_CONTROLS === "1";
type Control = "inserts aside" | "busy aside";
const CONTROL_KINDS: Control[] = ["inserts aside", "busy aside"];
/**
 * V8's allocation-site pretenuring, on as `npm start` runs (BENCH_PRETENURING=0 turns it off in both services). With
 * it, a service process settles early into one of two states that last its life, whether it records or not, and
 * under the users-create load one grows its old space by about twice the other's bytes per request and pauses for GC
 * 11 to 17 µs more per request: two services drawn so differ by a few percent that is not recording's. So every
 * round starts fresh services, and the median of the rounds is taken over the draws.
 */
const PRETENURING = process.env.BENCH_PRETENURING !== "0";

/** Pins every thread of a process to a core (threads it starts later inherit it). */
function pin(pid: number, core: string): void {
  execFileSync("taskset", ["--all-tasks", "--pid", "--cpu-list", core, String(pid)], { stdio: "ignore" });
}
// Read before pinning: the tools run in processes of their own, which would see one core (`nproc`).
const machine = machineDescription();
const tools = machineTools();
// A process inherits the core of the one that starts it: this one's, set before each start.
if (PINNED) pin(process.pid, DATABASE_CORE);

const loadsBefore = loadavg();
const database = await startProcess("src/embedded-mongo/cli.ts", ["--port", "0"], {}, /^mongodb:\/\//, nodeArgsFrom("BENCH_DB_NODE_ARGS"));
const databasePid = database.child.pid!;
const serverUri = database.line.trim().split(/\s/)[0]!.replace(/\/?$/, "");
// Everything after the database (the services, the load generators, the recording and inserts alone) on the other.
if (PINNED) pin(process.pid, SERVICES_CORE);

/**
 * "recording, not stored": a third service records every call and sends each batch's insert command, as encoded,
 * inside a ping (bench/withdrawals-service.ts, BENCH_LOG_STORED): all of recording's work in the service, none in the
 * database. Against the other two it tells the service's own cost from what the database's inserts put on the loop.
 */
type Variant = "recording" | "not recording" | "recording, not stored";
const VARIANTS: Variant[] = ["recording", "not recording", "recording, not stored"];
interface Service {
  child: ChildProcess;
  /** The service's next line of output (its answer to a line sent to it). */
  nextLine: () => Promise<string>;
  pid: number;
  httpPort: number;
  userId: string;
}
/** The database of a round's service of a variant (the same server for all). */
function databaseNameOf(variant: Variant, round: number): string {
  return `bench_request_log_${variant.replace(/[^a-z]+/g, "_")}_${round}`;
}
const databaseOf = (variant: Variant, round: number) => `${serverUri}/${databaseNameOf(variant, round)}`;
/** The controls' database, where bench/request-log-aside.ts inserts. */
const ASIDE_DATABASE = "bench_request_log_aside";
/** One API service per variant, each over a database of its own, with the user the reads load. */
async function startService(variant: Variant, round: number): Promise<Service> {
  const { child, line, nextLine } = await startProcess(
    "bench/withdrawals-service.ts",
    [],
    {
      BENCH_MONGO_URI: databaseOf(variant, round),
      // API role: no job workers or sweeps, whose timers would weigh on CPU per request.
      BENCH_ROLE: "api",
      BENCH_SANDBOX_KEY: KEY,
      BENCH_RECORD_REQUESTS: String(variant !== "not recording"),
      BENCH_LOG_STORED: String(variant !== "recording, not stored"),
      BENCH_GC: "1",
    },
    /^\{/,
    [...SERVICE_NODE_OPTIONS, ...(PRETENURING ? [] : ["--no-allocation-site-pretenuring"]), ...nodeArgsFrom("BENCH_SERVICE_NODE_ARGS")],
  );
  const { pid, httpPort } = JSON.parse(line) as { pid: number; httpPort: number };
  const created = await fetch(`http://127.0.0.1:${httpPort}/v1/users`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ phone: "+14155550100", email: "bench@example.com", first_name: "Bench" }),
  });
  if (created.status !== 201) throw new Error(`creating the user answered ${created.status}: ${await created.text()}`);
  return { child, nextLine, pid, httpPort, userId: ((await created.json()) as { id: string }).id };
}
let services = new Map<Variant, Service>();

type Load = "rest-read" | "users-create";
const LOADS: Load[] = ["rest-read", "users-create"];
const LABELS: Record<Load, string> = { "rest-read": "GET /v1/users/{id}", "users-create": "POST /v1/users with an Idempotency-Key" };

interface Run extends LoadResult {
  serviceMicros: number;
  databaseMicros: number;
  /** The load generator's CPU per request. */
  loaderMicros: number;
  /** The service's GC pauses per request, and how many bytes per request its old space grew by. */
  serviceGcMicros: number;
  oldSpaceBytes: number;
}
/** The service's GC pauses and old-space growth so far (bench/withdrawals-service.ts, its `gc` line). */
async function gcOf(service: Service): Promise<{ pauseMs: number; oldSpaceGrowthBytes: number }> {
  service.child.stdin!.write("gc\n");
  return (JSON.parse(await service.nextLine()) as { gc: { pauseMs: number; oldSpaceGrowthBytes: number } }).gc;
}
let phoneOffset = 0;
interface Aside {
  control: Control;
  /** inserts aside: entries per second. */
  perSecond: number;
  /** busy aside: the share of the core's time spun. */
  duty: number;
}
async function load(kind: Load, variant: Variant, durationMs: number, aside?: Aside): Promise<Run> {
  const service = services.get(variant)!;
  const asideProcess = aside
    ? await startProcess(
        "bench/request-log-aside.ts",
        [
          JSON.stringify({
            mode: aside.control === "inserts aside" ? "inserts" : "busy",
            core: PINNED ? DATABASE_CORE : "0,1",
            load: kind,
            perSecond: aside.perSecond,
            seconds: durationMs / 1000,
            duty: aside.duty,
          }),
        ],
        { BENCH_MONGO_URI: `${serverUri}/${ASIDE_DATABASE}` },
        /^ready/,
      )
    : null;
  const spec = { load: kind, httpPort: service.httpPort, key: KEY, userId: service.userId, concurrency: CONCURRENCY, durationMs, phoneOffset };
  const gcBefore = await gcOf(service);
  const serviceBefore = cpuSeconds(service.pid);
  const databaseBefore = cpuSeconds(databasePid);
  const result = await runToCompletion<LoadResult & { loaderMicros: number }>("bench/request-log-load.ts", [JSON.stringify(spec)]);
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  if (asideProcess) console.error(aside!.control, await asideProcess.nextLine());
  const serviceAfter = cpuSeconds(service.pid);
  const databaseAfter = cpuSeconds(databasePid);
  const gcAfter = await gcOf(service);
  phoneOffset += result.requests;
  if (result.errors > 0) throw new Error(`${kind}, ${variant}: ${result.errors} failed requests`);
  const perRequest = (seconds: number) => (seconds * 1e6) / Math.max(1, result.requests);
  return {
    ...result,
    serviceMicros: perRequest(serviceAfter - serviceBefore),
    databaseMicros: perRequest(databaseAfter - databaseBefore),
    loaderMicros: result.loaderMicros / Math.max(1, result.requests),
    serviceGcMicros: perRequest((gcAfter.pauseMs - gcBefore.pauseMs) / 1000),
    oldSpaceBytes: (gcAfter.oldSpaceGrowthBytes - gcBefore.oldSpaceGrowthBytes) / Math.max(1, result.requests),
  };
}

/** Each load's latest run of each variant (warm-ups included): what a control takes its rate and share from. */
const latest = Object.fromEntries(LOADS.map((kind) => [kind, {}])) as Record<Load, Record<Variant, Run>>;
/**
 * Drops the databases of a round's services (and the controls' database), once its services have stopped. The
 * embedded database keeps everything in its process's heap, and its garbage collector's pauses grow with that heap:
 * kept, the rounds before would weigh on each later round's runs, whichever variant ran when a long pause came.
 */
async function dropDatabasesOf(round: number): Promise<void> {
  const client = await MongoClient.connect(serverUri);
  try {
    for (const name of [...VARIANTS.map((variant) => databaseNameOf(variant, round)), ASIDE_DATABASE]) await client.db(name).dropDatabase();
  } finally {
    await client.close();
  }
}
/**
 * The order a round's services start and warm up in: each variant first, second and third once every three rounds.
 * A service's place in that order weighs on its runs for its life (on this machine, two identical services started
 * second and third differed by 2.6% of CPU per GET over 12 rounds, and a recording service started first read 1.8%
 * above one started fourth), so a variant always started first would carry that place's cost as its own.
 */
function startOrderOf(round: number): Variant[] {
  const shift = (round - 1) % VARIANTS.length;
  return [...VARIANTS.slice(shift), ...VARIANTS.slice(0, shift)];
}
/**
 * A round's fresh services, each load and variant warmed up (JIT, pools, indexes), over fresh databases: the last
 * round's services stopped and their databases dropped.
 */
async function startRound(round: number): Promise<void> {
  for (const { child } of services.values()) await stopProcess(child);
  if (round > 1) await dropDatabasesOf(round - 1);
  services = new Map();
  const order = startOrderOf(round);
  for (const variant of order) services.set(variant, await startService(variant, round));
  for (const kind of LOADS) for (const variant of order) latest[kind][variant] = await load(kind, variant, WARM_UP_MS);
}
/**
 * A measured run, right after a warm-up of the same service and load. A service that has sat idle while the others
 * ran pays for it in the run that follows (on this machine, identical services read 2.6% apart by the time each had
 * waited since its warm-up, and -0.6% apart with this warm-up): without it, a variant's runs would carry the waits
 * its place in the round gave it.
 */
async function measuredLoad(kind: Load, variant: Variant, aside?: Aside): Promise<Run> {
  latest[kind][variant] = await load(kind, variant, WARM_UP_MS);
  return load(kind, variant, DURATION_MS, aside);
}

const rows: string[] = [];
const runs: Record<Load, Record<Variant, Run[]>> = {
  "rest-read": { recording: [], "not recording": [], "recording, not stored": [] },
  "users-create": { recording: [], "not recording": [], "recording, not stored": [] },
};
const controls: Record<Load, Record<Control, Run[]>> = {
  "rest-read": { "inserts aside": [], "busy aside": [] },
  "users-create": { "inserts aside": [], "busy aside": [] },
};
type Slot = { variant: Variant } | { control: Control };
const SLOTS: Slot[] = [...VARIANTS.map((variant) => ({ variant })), ...(CONTROLS ? CONTROL_KINDS.map((control) => ({ control })) : [])];
/** Every order of `slots`. */
function permutations<T>(slots: T[]): T[][] {
  if (slots.length <= 1) return [slots];
  return slots.flatMap((first, i) => permutations([...slots.slice(0, i), ...slots.slice(i + 1)]).map((rest) => [first, ...rest]));
}
const ORDERS = permutations(SLOTS);
/**
 * The runs of a round in turn, since a run's place in a round weighs on it (the later ones ran faster on this
 * machine): the three variants in each of their six orders, one per round, so that over six rounds each variant runs
 * before each other as often as after it; with the controls' five runs, rotated a place every round.
 */
function orderOf(round: number): Slot[] {
  if (!CONTROLS) return ORDERS[(round - 1) % ORDERS.length]!;
  const shift = (round - 1) % SLOTS.length;
  return [...SLOTS.slice(shift), ...SLOTS.slice(0, shift)];
}
for (let round = 1; round <= ROUNDS; round++) {
  await startRound(round);
  for (const kind of LOADS) {
    for (const slot of orderOf(round)) {
      let run: Run;
      let label: string;
      if ("variant" in slot) {
        run = await measuredLoad(kind, slot.variant);
        runs[kind][slot.variant].push(run);
        latest[kind][slot.variant] = run;
        label = `${LABELS[kind]}, ${slot.variant}, round ${round}`;
      } else {
        const { recording: withRun, "not recording": withoutRun } = latest[kind];
        // The database's extra CPU while the service recorded, as a share of its core's time.
        const extra = ((withRun.databaseMicros - withoutRun.databaseMicros) * withRun.perSecond) / 1e6;
        run = await measuredLoad(kind, "not recording", {
          control: slot.control,
          perSecond: withRun.perSecond,
          duty: Math.min(1, Math.max(0.02, extra)),
        });
        controls[kind][slot.control].push(run);
        label = `${LABELS[kind]}, not recording, ${slot.control}, round ${round}`;
      }
      rows.push(
        `${formatLoad(label, run)} ${run.serviceMicros.toFixed(0)} | ${run.databaseMicros.toFixed(0)} | ${run.loaderMicros.toFixed(0)} | ${run.serviceGcMicros.toFixed(0)} | ${run.oldSpaceBytes.toFixed(0)} |`,
      );
      console.error(rows.at(-1), `load ${loadavg()[0]!.toFixed(1)}`);
    }
  }
}
const loadsAfterRuns = loadavg();

// The recording path alone, against the recording service's database (its indexes), at the rate each load
// reached with recording (so that batches are as large as under the load).
const alone = {} as Record<Load, { entries: number; failures: number; serviceMicrosPerEntry: number; databaseMicrosPerEntry: number }>;
for (const kind of LOADS) {
  const perSecond = Math.round(median(runs[kind].recording.map((r) => r.perSecond)));
  alone[kind] = await runToCompletion(
    "bench/request-log-alone.ts",
    [JSON.stringify({ load: kind, perSecond, seconds: ALONE_SECONDS })],
    {
      BENCH_MONGO_URI: databaseOf("recording", ROUNDS),
      BENCH_DB_PID: String(databasePid),
    },
    SERVICE_NODE_OPTIONS,
  );
}
// The database's part alone and steady (bench/request-log-inserts.ts), each load's entries in a database of its own.
const inserts = {} as Record<Load, { entries: number; databaseMicrosPerEntry: number }>;
for (const kind of LOADS) {
  inserts[kind] = await runToCompletion(
    "bench/request-log-inserts.ts",
    [JSON.stringify({ load: kind, preload: INSERTS_PRELOAD, entries: INSERTS_ENTRIES })],
    { BENCH_MONGO_URI: `${serverUri}/bench_request_log_inserts_${kind.replace("-", "_")}`, BENCH_DB_PID: String(databasePid) },
  );
}
for (const { child } of services.values()) await stopProcess(child);
database.child.kill("SIGTERM");
const loadsAfter = loadavg();

const signed = (x: number) => `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)}%`;
/**
 * Per round, the cost of a recording variant against the service that does not record: `measure(with) /
 * measure(without) - 1` (or its inverse for throughput).
 */
const perRound = (kind: Load, cost: (withRun: Run, withoutRun: Run) => number, variant: Variant = "recording") =>
  runs[kind][variant].map((withRun, i) => cost(withRun, runs[kind]["not recording"][i]!));
/** How far the median could move with other rounds of the machine (none for a single figure). */
const interval = (values: number[], format: (x: number) => string) => {
  if (values.length < 2) return "";
  const { low, high } = medianInterval(values);
  return `${format(low)} to ${format(high)}`;
};
const goalRow = (measure: string, values: number[]) => {
  const m = median(values);
  return `| ${measure} | ${signed(m)} | ${interval(values, signed)} | ${values.map(signed).join(", ")} | at most +${GOAL * 100}% | ${m <= GOAL ? "met" : "**not met**"} |`;
};
const plainRow = (measure: string, values: number[], format: (x: number) => string) =>
  `| ${measure} | ${format(median(values))} | ${interval(values, format)} | ${values.map(format).join(", ")} | | |`;
const micros = (x: number) => `${x.toFixed(0)} µs`;
const summary = LOADS.flatMap((kind) => {
  const without = median(runs[kind]["not recording"].map((r) => r.serviceMicros));
  return [
    goalRow(
      `${LABELS[kind]}: req/s without ÷ req/s with − 1`,
      perRound(kind, (w, wo) => wo.perSecond / w.perSecond - 1),
    ),
    goalRow(
      `${LABELS[kind]}: service CPU per request with ÷ without − 1`,
      perRound(kind, (w, wo) => w.serviceMicros / wo.serviceMicros - 1),
    ),
    goalRow(`${LABELS[kind]}: service CPU of recording one entry alone ÷ service CPU per request without`, [
      alone[kind].serviceMicrosPerEntry / without,
    ]),
    plainRow(
      `${LABELS[kind]}: req/s without ÷ req/s recording, not stored − 1`,
      perRound(kind, (w, wo) => wo.perSecond / w.perSecond - 1, "recording, not stored"),
      signed,
    ),
    plainRow(
      `${LABELS[kind]}: service CPU per request recording, not stored ÷ without − 1`,
      perRound(kind, (w, wo) => w.serviceMicros / wo.serviceMicros - 1, "recording, not stored"),
      signed,
    ),
    plainRow(
      `${LABELS[kind]}: service GC pauses per request, with − without`,
      perRound(kind, (w, wo) => w.serviceGcMicros - wo.serviceGcMicros),
      micros,
    ),
    plainRow(
      `${LABELS[kind]}: database CPU per request, with − without`,
      perRound(kind, (w, wo) => w.databaseMicros - wo.databaseMicros),
      micros,
    ),
    plainRow(
      `${LABELS[kind]}: database CPU per request with ÷ without − 1`,
      perRound(kind, (w, wo) => w.databaseMicros / wo.databaseMicros - 1),
      signed,
    ),
  ];
});
/** Each control against the plain run of its round: the cost the control's work alone put on the service. */
const controlRows = CONTROLS
  ? LOADS.flatMap((kind) =>
      CONTROL_KINDS.flatMap((control) => {
        const pairs = controls[kind][control].map((c, i) => [c, runs[kind]["not recording"][i]!] as const);
        return [
          plainRow(
            `${LABELS[kind]}, ${control}: req/s without ÷ req/s with it − 1`,
            pairs.map(([c, plain]) => plain.perSecond / c.perSecond - 1),
            signed,
          ),
          plainRow(
            `${LABELS[kind]}, ${control}: service CPU per request with it ÷ without − 1`,
            pairs.map(([c, plain]) => c.serviceMicros / plain.serviceMicros - 1),
            signed,
          ),
          plainRow(
            `${LABELS[kind]}, ${control}: load generator CPU per request with it ÷ without − 1`,
            pairs.map(([c, plain]) => c.loaderMicros / plain.loaderMicros - 1),
            signed,
          ),
        ];
      }),
    )
  : [];
const loads = (l: number[]) => l.map((x) => x.toFixed(2)).join(", ");

const report = `# The request log's cost on the rest-read and users-create loads

Code: ${codeRevision(["src", "gen", "bench"])}.

Machine: ${machine}; shared with other sessions. ${tools}. Load average (1, 5, 15 min):
${loads(loadsBefore)} when the runs started, ${loads(loadsAfterRuns)} when the loads ended, ${loads(loadsAfter)} at the end.

Method (\`npm run bench -- request-log\`, bench/request-log.bench.ts), each part in its own process:

- ${
  PINNED
    ? `Cores: the database on one (\`taskset\`, every thread), the services, the load generator and the parts below
  on the other, as a deployment's MongoDB has its own machine. Placed by the scheduler, these processes keep both
  cores busy and the loop is CPU-bound as a whole: the database's inserts then take time from the service, and so do
  the other processes' turns, differently in every run. The load generator's CPU per request (the same with recording
  and without) shares the service's core: the ratios below understate the service's own cost by that share.`
    : "Cores: not pinned (`BENCH_PIN=0`): the processes share both cores as the scheduler places them."
}
- The embedded database (src/embedded-mongo/cli.ts, in memory).
- Three Svc services (bench/withdrawals-service.ts, role \`api\`: no job workers), each over its own database of that
  server: one recording every call in the request log (the shipped writer: 500 entries per insert, or 200 ms after
  a batch's first entry), one not (\`recordRequests: false\`), and one recording but not storing (\`recording, not
  stored\`: each batch's insert command encoded as the driver encodes it and sent inside a \`ping\`, which the
  database answers without decoding or inserting the entries; the service does all of recording's work, the
  database none). None monitors its commands, as in production (that service file turns the driver's command
  monitoring on only with \`BENCH_COMMANDS=1\`). Every round starts fresh services, each over databases of its own
  (the round before's dropped: the embedded database holds its data in its heap, and its collector's pauses grow
  with it), and warms them up: a service process settles early into one of two states for its life, whether it records or
  not, one growing its old space by about twice the other's bytes per request (V8's allocation-site pretenuring; see
  "Where recording's cost is"), so services kept for the whole run would weigh their draws on every round alike. ${
    PRETENURING
      ? "V8's allocation-site pretenuring is on, as `npm start` runs (`BENCH_PRETENURING=0` turns it off)."
      : "All run with V8's allocation-site pretenuring off (`--no-allocation-site-pretenuring`, `BENCH_PRETENURING=0`), unlike `npm start`."
  }
- The load generator (bench/request-log-load.ts), one process per run: ${CONCURRENCY} requests in flight over keep-alive
  connections, ${DURATION_MS / 1000} s per run; ${ROUNDS} rounds, each starting its services in an order that rotates
  every round (each variant first, second and third once every three rounds) and warming each load and variant up
  for ${WARM_UP_MS / 1000} s in that order, then running the three variants of a load in turn, in each of their six
  orders once every six rounds, each measured run right after ${WARM_UP_MS / 1000} s more of the same service and load.
  A service's place in the start order and how long it has waited since its last run both weigh on the run that
  follows, by a few percent on this machine: rotated and warmed so, neither is any variant's own.
  - rest-read: \`GET /v1/users/{id}\` with a sandbox key, as bench/rest-read.bench.ts loads it.
  - users-create: \`POST /v1/users\` with a fresh Idempotency-Key and phone number, as bench/users-create.bench.ts.
- CPU µs/request: the CPU time (all threads) of the service process and of the database process from the start of
  the run to ${SETTLE_MS} ms after it (the writer's last batch included), and the load generator's while it loads, per
  answered request. Over the same span, the service's GC pauses (its main thread stopped; the collector's helper
  threads are in its CPU) and how much its old space grew between collections (what the young generation promoted,
  and what was allocated there directly), per request.
- Recording alone (bench/request-log-alone.ts, its own process): the entries of each load's calls for ${ALONE_SECONDS} s at the
  rate the load reached with recording (median of the rounds), built by the pipeline's function, batched by the
  shipped writer and inserted into the recording service's database, after a warm-up of 20,000 entries; the CPU of
  that process per entry, less that of its pacing alone (what recording costs the service: the entry, the
  batching, the driver's encoding and writes), and of the database process (the inserts and the maintenance of
  the collection's indexes).
- The database's inserts alone (bench/request-log-inserts.ts, its own process): each load's entries sent as the
  writer sends them at its fullest, ${INSERTS_PRELOAD.toLocaleString("en")} then ${INSERTS_ENTRIES.toLocaleString("en")} more in inserts of 500, one after the other, encoded
  beforehand; the database process's CPU per entry over the last ${INSERTS_ENTRIES.toLocaleString("en")}. Steadier than the row above (no pacing,
  full batches, nothing else sent meanwhile), it is the database's own cost of an entry.

| run | requests/s | p50 ms | p99 ms | requests | errors | service CPU µs/request | database CPU µs/request | load generator CPU µs/request | service GC pauses µs/request | service old space grown, bytes/request |
|---|---|---|---|---|---|---|---|---|---|---|
${rows.join("\n")}

| recording alone, per entry | entries | entries/s | writer's failures and drops | service CPU µs | database CPU µs |
|---|---|---|---|---|---|
${LOADS.map((kind) => `| ${LABELS[kind]} | ${alone[kind].entries} | ${(alone[kind].entries / ALONE_SECONDS).toFixed(0)} | ${alone[kind].failures} | ${alone[kind].serviceMicrosPerEntry.toFixed(1)} | ${alone[kind].databaseMicrosPerEntry.toFixed(1)} |`).join("\n")}

| the database's inserts alone, per entry | entries | database CPU µs |
|---|---|---|
${LOADS.map((kind) => `| ${LABELS[kind]} | ${inserts[kind].entries} | ${inserts[kind].databaseMicrosPerEntry.toFixed(1)} |`).join("\n")}

| cost of recording | median of the rounds | 95% interval of the median | each round | goal | |
|---|---|---|---|---|---|
${summary.join("\n")}
${
  CONTROLS
    ? `
Controls (\`BENCH_CONTROLS=1\`): the service that does not record, loaded again in each round while a process on the
database's core (bench/request-log-aside.ts) either inserts the same entries at the rate of the latest recording
run into another database of the server (\`inserts aside\`: the database's extra work of recording, and that
process's own encoding and round trips, on the database's core), or spins for the share of that core's time the
database spent more in the latest recording run (\`busy aside\`: as much CPU on the other core, without database
work); each against the plain run of its round without recording. The five runs of a round rotate a place every
round. If the recording service's extra CPU came from the database's work reaching its core, the controls would
cost about as much as recording does.

| control | median of the rounds | 95% interval of the median | each round | | |
|---|---|---|---|---|---|
${controlRows.join("\n")}
`
    : ""
}
The goal rows are the service's: requests per second, and the service process's CPU per request, with recording
against without, each the median of the rounds' costs; the goal is met when that median is at most 5%. Beside it,
its 95% bootstrap interval (the rounds resampled with replacement, the middle 95% of those samples' medians): how
far the median could move in another run of as many rounds on the same machine. The rows "recording, not stored"
read the same measures with everything recording does in the service and nothing of it in the database: what is
left between them and the goal rows is what the database's inserts put on the closed loop. The database's extra CPU is reported beside them, not in the goal: it is the
inserts and their index maintenance, which a deployment's MongoDB does on its own machine.

## Where recording's cost is

Profiled with \`node --cpu-prof\` (\`BENCH_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR"\` runs the services so) and
measured in isolation on this machine (2026-11-27):

- In the service, per entry: building it (\`requestLogEntry\`) about 1 µs; the driver's BSON encoding of its 14
  fields (about 290 bytes) 3 to 4 µs; the writer's buffer next to nothing. Under the loads, recording's functions
  (the entry, the writer, the insert with its encoding) were under 2% of the recording service's busy samples.
- In the service, per batch: one \`insert\` command. Its client CPU is about a round trip's (a \`ping\` cost 0.8 ms of
  client CPU at load 15 in this VM, most of it the socket write, the kernel's loopback delivery charged to the
  writer), the same for 16 entries as for 100. When calls are few a batch leaves 200 ms after its first entry, so a
  process makes at most five such round trips a second; from a few hundred calls a second batches hold 100 to 500
  entries and the round trip is a few µs per entry. This is why the "recording alone" row weighs more at the low
  rates of a busy machine than at a quiet machine's.
- What the runs' pairs put on recording beyond that (POST: +4.3% and +4.6% of service CPU per request in the quiet
  series of 2026-11-28, against 2.1% for recording alone) was mostly the two service processes' garbage collection,
  not recording. With V8's allocation-site pretenuring (on by default), each service process settles early into one
  of two states that last its life. Under the users-create load, on this machine at load averages of 4 to 9
  (2026-11-28, 2.5 s runs of each process in turn), four processes alike, none recording, twice: two grew their old
  space by 6.6 to 7.9 KB per request and paused 33 to 38 µs per request for GC, the other two by 3.4 to 3.8 KB and
  20 to 22 µs. In the other such runs, recording services and the others alike landed in either state: a pair of
  services drawn differently differs by 11 to 17 µs of GC pauses per POST (a quiet run's POST costs the service
  about 300 µs), whichever records. With \`--no-allocation-site-pretenuring\`, eight processes out of eight grew their
  old space by 3.3 to 4.0 KB per request, and among them two recording services as the two beside them that did not
  (3.5 and 3.6 KB against 3.5 and 3.5 KB): recording adds nothing to it that this shows. So every round starts a
  fresh pair of services (the draws then vary from round to round and the median is taken over them, with V8's
  defaults, as \`npm start\` runs), and the GC columns show each run's share.
- Nothing of Svc's part was waste to cut: every field is kept, the entry is built once, after the answer, and the
  driver serializes each document once (the size check reuses the bytes). What remains is the encoding and the
  round trip, which batching already divides.
- In the database (profiled with \`BENCH_DB_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR"\`, and measured by the
  database's inserts alone): an entry is decoded (BSON), checked against the _id index, and its keys added to the
  indexes it belongs to. The collection has six: the _id, the tenant's newest-first, one per selective filter
  (a refusal's status, route, error code and Idempotency-Key: the status, error code and key indexes partial, holding
  only the entries that have one), and the 30-day TTL index; a successful call without an Idempotency-Key is in
  four of them, one with a key in five. test/store/request-log-indexes.spec.ts shows by explain that each filter's
  list is answered from its own index, so none is unused; a success's status (that of most calls), \`method\`,
  \`source\` and a class of statuses (\`4xx\`, a range: the status index would give its entries in status order, to
  be sorted whole) are read over the newest-first index: quick when they are common, a long walk for a rare one
  over 30 days.
- What the database's CPU per entry went to, before the changes of this series (inserts alone, this machine at a
  load average of 12 to 16, each pair run in turn): 71 and 83 µs for a GET's entry, 73 and 61 µs for a POST's.
  About two thirds was index maintenance, and half of that the ordered sets' binary searches comparing keys
  field by field through the general BSON comparison (type ranks of both values first); the partial indexes'
  filters ran through mingo for every entry (5% of the insert); every call had a status index entry. Now two
  values of one common type are compared at once, a plain partial filter (\`{error_code: {$type: "string"}}\`) is
  tested directly, and the status index holds refusals only: 32 and 24 µs (GET), 44 and 39 µs (POST) in the same
  pairs. What remained on 2026-11-28 (one process inserting 150,000 entries into a collection with the log's indexes,
  its CPU time, interleaved pairs at a load average of 6 to 10): with entries a millisecond apart, as a load makes
  them, a GET's entry cost 5 to 8 µs of index work (four keys, each past its index's end) and a POST's 18 to 20 µs,
  most of it the Idempotency-Key's index, whose random keys land anywhere: a search of some 18 comparisons, each a
  few dependent reads from memory the cache no longer holds. The ordered set now keeps its chunks' last entries in
  an array of their own and an entry holds its key's first field, which took such a key's insert from 13.6-15.6 µs
  to 7.6-10.0 µs (five pairs). Decoding an entry's BSON costs about 10 µs more (the bson library's deserializer),
  and garbage collection about a sixth of the whole. The inserts-alone row's entries are encoded in a tight loop
  and share their milliseconds by the hundred, so their time-ordered keys (ties broken by the id's random digits)
  land inside the last chunk instead of past its end: that row overstates a load's index work by a few µs.
- Since then (2026-11-28, afternoon): an index insert's search compares ranks kept in arrays beside the ordered
  set's chunks (a string key's first seven characters as one number) and reaches an entry only where two ranks tie,
  which a random Idempotency-Key almost never does; a unique index holds a string _id under the string itself; the
  decoder checks each key against the one at its place in the last document. The database process's CPU per entry
  (one process inserting 100,000 entries, then 100,000 measured, in inserts of 500 with entries a third of a
  millisecond apart, five alternated pairs at a load average of 3.4 to 5.0, medians): GET 8.0 to 7.8 µs, POST 16.4
  to 11.3 µs. What remains of a GET's entry is mostly the document's own: with the _id index alone it cost 5.8 µs,
  a third of it decoding and a seventh the _id hash's probe (one read at a random place of a map of hundreds of
  thousands of ids, some 600 ns on this machine, a map of V8's or one written in JavaScript alike), the rest the
  garbage collection of what every stored entry keeps and the command's handling.
`;
writeFileSync(new URL("./results/request-log.md", import.meta.url), report);
console.log(report);
process.exit(0);
