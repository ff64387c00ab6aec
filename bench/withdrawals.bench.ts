// Withdrawal creation (POST /v1/users/{id}/withdrawals with an Idempotency-Key, sandbox) against a bare Fastify
// route doing one insertOne into the same database, measured in the same run; then the settlement throughput of
// simulated deposits (the ledger's job completing them). Every part runs in its own process: the embedded
// database (src/embedded-mongo/cli.ts), the service (bench/withdrawals-service.ts, with the bare route beside it),
// and the load generator (bench/withdrawals-load.ts). Goals: in role all, at 128 in flight, creation at least 35% of
// the bare route with p99 under 250 ms; settlement by one worker at least 1,000/s.
// Writes bench/results/withdrawals.md.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { MongoClient } from "mongodb";
import { commandTable } from "./command-shapes.ts";
import { formatLoad, type LoadResult } from "./http-load.ts";
import { codeRevision, machineDescription, machineTools } from "./machine.ts";
import { cpuSecondsOf } from "./process-cpu.ts";
import { writeResults } from "./results-file.ts";
import { nodeArgsFrom, startProcess as start, stopProcess as stop } from "./processes.ts";
import { SERVICE_NODE_OPTIONS } from "./service-node-options.ts";
import { median } from "./statistics.ts";

/** BENCH_LEVELS: the levels of requests in flight, as "32,128" (the default); another list is a partial run (not written). */
const CONCURRENCY_LEVELS = (process.env.BENCH_LEVELS ?? "32,128").split(",").map(Number);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 6000);
/** Rounds at each level: each a bare run then a withdrawal run; the report gives every round and their median. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
// Many users, each with a few withdrawals in flight at a time, as in a real project (its in-flight transactions
// live in the user document, and every write of it costs more the more it holds). In role api nothing settles,
// so each user ends the phase with about (withdrawals created) / USERS in flight; the report says how many.
const USERS = Number(process.env.BENCH_USERS ?? 10_000);
/** Requests in flight while the users are created and funded (set-up, not measured). */
const SETUP_CONCURRENCY = 32;
const DEPOSITS = Number(process.env.BENCH_DEPOSITS ?? 3000);
const KEY = "svc_test_benchwithdrawalsbenchwithdraw1";
/**
 * BENCH_PARTS: the phases to run, of "all" (creation in role all), "settlement" and "api" (creation alone); all three
 * by default. A run of some of them prints its report without writing the results file (to profile one phase).
 */
const PARTS = new Set((process.env.BENCH_PARTS ?? "all,settlement,api").split(","));
/**
 * BENCH_COMMANDS=1: the services count the commands they send, and in role all the statements of their writes per
 * withdrawal end to end (the driver's command monitoring, which costs their CPU: the figures of such a run are not
 * comparable with a run without it).
 */
const COUNTED = process.env.BENCH_COMMANDS === "1";
const EVERY_PART = ["all", "settlement", "api"].every((part) => PARTS.has(part)) && process.env.BENCH_LEVELS === undefined;

interface Service {
  child: ChildProcess;
  pid: number;
  httpPort: number;
  barePort: number;
  /** The commands the service sent the database since the last call, by shape (bench/command-shapes.ts). */
  commands: () => Promise<Map<string, number>>;
  /** The statements of its write commands since the last call (countWrittenDocuments), by command and collection. */
  written: () => Promise<Map<string, number>>;
  /** The service's event-loop delay since the last call: its 99th percentile and its longest, in ms. */
  loopDelay: () => Promise<{ p99Ms: number; maxMs: number }>;
  /** Stops its job queue (the jobs it holds unlocked or finished, as at shutdown), and starts it again. */
  pauseJobs: () => Promise<void>;
  resumeJobs: () => Promise<void>;
}
async function startService(role: string, extraEnv: Record<string, string> = {}): Promise<Service> {
  // BENCH_SERVICE_NODE_ARGS: extra node options of the service processes (for example --cpu-prof, to see where the time goes).
  const nodeArgs = [...SERVICE_NODE_OPTIONS, ...nodeArgsFrom("BENCH_SERVICE_NODE_ARGS")];
  const { child, line, nextLine } = await start(
    "bench/withdrawals-service.ts",
    [],
    { BENCH_MONGO_URI: uri, BENCH_ROLE: role, BENCH_SANDBOX_KEY: KEY, ...extraEnv },
    /^\{/,
    nodeArgs,
  );
  /** Asks the service for one of its counts (`commands`, `written`) and answers it. */
  const counts = (what: "commands" | "written") => async () => {
    child.stdin!.write(`${what}\n`);
    for (;;) {
      const answer = await nextLine();
      if (answer.startsWith(`{"${what}"`)) return new Map(Object.entries((JSON.parse(answer) as Record<string, Record<string, number>>)[what]!));
    }
  };
  const loopDelay = async () => {
    child.stdin!.write("loop\n");
    for (;;) {
      const answer = await nextLine();
      if (answer.startsWith('{"loop"')) return (JSON.parse(answer) as { loop: { p99Ms: number; maxMs: number } }).loop;
    }
  };
  const jobsCommand = (command: "pause" | "resume") => async () => {
    child.stdin!.write(`${command}\n`);
    while ((await nextLine()) !== `{"jobs":"${command}d"}`) {}
  };
  return {
    child,
    commands: counts("commands"),
    written: counts("written"),
    loopDelay,
    pauseJobs: jobsCommand("pause"),
    resumeJobs: jobsCommand("resume"),
    ...(JSON.parse(line) as { pid: number; httpPort: number; barePort: number }),
  };
}

const loadBefore = loadavg();
// BENCH_DB_NODE_ARGS: extra node options of the database process (for example --cpu-prof).
const dbNodeArgs = nodeArgsFrom("BENCH_DB_NODE_ARGS");
const database = await start("src/embedded-mongo/cli.ts", ["--port", "0"], {}, /^mongodb:\/\//, dbNodeArgs);
const uri = `${database.line.trim().split(/\s/)[0]!.replace(/\/?$/, "")}/bench_withdrawals`;
const client = await MongoClient.connect(uri);
const db = client.db();

// Phase 1: the service in its shipped role (all: API and jobs), funded users, withdrawals against the bare route.
let service = await startService("all");
const call = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`http://127.0.0.1:${service.httpPort}${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await response.json()) as any;
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
};
/** Runs `task(i)` for i in [0, count), SETUP_CONCURRENCY at a time. */
async function inParallel(count: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: SETUP_CONCURRENCY }, worker));
}
const users: string[] = new Array(USERS);
await inParallel(USERS, async (i) => {
  users[i] = (await call("POST", "/v1/users", { phone: `+1415${String(i).padStart(7, "0")}` })).id;
});
// KYC approval is not what is measured: set directly.
await db.collection("users").updateMany({ _id: { $in: users as never[] } }, { $set: { kyc_status: "approved" } });
await inParallel(USERS, async (i) => {
  await call("POST", `/v1/sandbox/users/${users[i]}/deposits`, { amount_usd: 1_000_000, complete_after_seconds: 0 });
});
const deadline = Date.now() + 180_000;
while ((await db.collection("transactions").countDocuments({ type: "deposit", status: "completed" })) < USERS) {
  if (Date.now() > deadline) throw new Error("the funding deposits did not complete");
  await new Promise((r) => setTimeout(r, 200));
}

const usersFile = join(mkdtempSync(join(tmpdir(), "svc-bench-")), "users.json");
writeFileSync(usersFile, JSON.stringify(users));
/** Where the next run of each target starts in the users, so that every user gets its share of the requests. */
const offsets = { bare: 0, withdrawal: 0 };

async function load(
  target: "bare" | "withdrawal",
  concurrency: number,
  durationMs: number,
  maxRequests?: number,
): Promise<
  LoadResult & { cpuMicros: number; dbCpuMicros: number; commands: Map<string, number>; loop: { p99Ms: number; maxMs: number }; ping: PingStats }
> {
  const spec = {
    target,
    httpPort: service.httpPort,
    barePort: service.barePort,
    key: KEY,
    usersFile,
    concurrency,
    durationMs,
    offset: offsets[target],
    ...(maxRequests === undefined ? {} : { maxRequests }),
  };
  await service.commands();
  await service.loopDelay();
  const pings = pingWhile();
  const cpuBefore = cpuSecondsOf(service.pid);
  const dbCpuBefore = cpuSecondsOf(database.child.pid!);
  const { child, line } = await start("bench/withdrawals-load.ts", [JSON.stringify(spec)], {}, /^\{/);
  await new Promise((resolve) => child.once("exit", resolve));
  const ping = await pings.stop();
  const result = JSON.parse(line) as LoadResult;
  offsets[target] += result.requests;
  const perRequest = (seconds: number) => (seconds / Math.max(1, result.requests)) * 1e6;
  return {
    ...result,
    cpuMicros: perRequest(cpuSecondsOf(service.pid) - cpuBefore),
    dbCpuMicros: perRequest(cpuSecondsOf(database.child.pid!) - dbCpuBefore),
    commands: await service.commands(),
    loop: await service.loopDelay(),
    ping,
  };
}

interface PingStats {
  p99Ms: number;
  maxMs: number;
}
/**
 * Pings the database every 20 ms (one at a time, from this process) until stopped: a ping waits for the command the
 * database is running, so its latency shows how long the database holds up a short command (a withdrawal's)
 * behind others, such as a settlement batch.
 */
function pingWhile(): { stop: () => Promise<PingStats> } {
  const latencies: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      await db.command({ ping: 1 });
      latencies.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      const sorted = latencies.sort((a, b) => a - b);
      return { p99Ms: sorted[Math.floor(sorted.length * 0.99)] ?? Number.NaN, maxMs: sorted.at(-1) ?? Number.NaN };
    },
  };
}

const rows: string[] = [];
/** The commands of the last withdrawal run at the highest level, per deployment, and its requests. */
const withdrawalCommands = new Map<string, { commands: Map<string, number>; requests: number }>();
/** Role all: the write statements of the last withdrawal run at the highest level and its settlement, and its requests. */
const writtenEndToEnd = new Map<string, { written: Map<string, number>; requests: number }>();

// Watched by whether a step job is left (one index lookup): counting the settled transactions, or the jobs,
// aggregates over the collection in the database process, which would count in its CPU per settlement or request.
const anyStepLeft = async () => (await db.collection("jobs").findOne({ name: "transaction-step" }, { projection: { _id: 1 } })) !== null;
const stepsLeft = () => db.collection("jobs").countDocuments({ name: "transaction-step" });
/** Waits until every step job has run to its end (the process settles what the runs before left). */
async function settledBacklog(what: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (await anyStepLeft()) {
    if (Date.now() > deadline) throw new Error(`${await stepsLeft()} withdrawal steps left 120 s after ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface Goal {
  /** The median of the rounds' ratios of withdrawals to bare inserts at the highest level. */
  ratio: number;
  /** The median and the highest of the rounds' withdrawal p99 at the highest level. */
  p99Ms: number;
  highestP99Ms: number;
}
/**
 * Measures withdrawals against the bare route at each level, in the service running now; answers the goal's figures
 * at the highest level. With `settles` (role all), each run starts once the steps of the runs before it have all
 * run: a withdrawal run carries the settlement of its own withdrawals while it lasts (their steps are due 1 s and
 * 2 s after each), not a backlog of earlier runs, and a bare run none (which slowed it, and so raised the ratio).
 */
async function measure(setup: string, summary: string[], settles: boolean): Promise<Goal> {
  await load("bare", 32, 3000); // warm-up: JIT, indexes, connection pools
  // Each user's first withdrawal in a process reads its wallet (later ones need no read): one for every user, as
  // a running service has seen its active users.
  await load("withdrawal", 32, 120_000, USERS);
  const settled = (what: string) => (settles ? settledBacklog(what) : Promise.resolve());
  await settled("the warm-up");
  let atHighest: Goal = { ratio: 0, p99Ms: 0, highestP99Ms: 0 };
  for (const concurrency of CONCURRENCY_LEVELS) {
    const ratios: number[] = [];
    const p99s: number[] = [];
    const left: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const bare = await load("bare", concurrency, DURATION_MS);
      await settled("a bare run");
      await service.written();
      const withdrawal = await load("withdrawal", concurrency, DURATION_MS);
      if (settles) left.push(await stepsLeft());
      await settled("a withdrawal run");
      if (settles) writtenEndToEnd.set(setup, { written: await service.written(), requests: withdrawal.requests });
      const stalls = (r: typeof bare) =>
        `${r.loop.p99Ms.toFixed(0)} / ${r.loop.maxMs.toFixed(0)} | ${r.ping.p99Ms.toFixed(0)} / ${r.ping.maxMs.toFixed(0)} |`;
      rows.push(
        `${formatLoad(`${setup}: bare insert, ${concurrency} in flight, round ${round}`, bare)} ${bare.cpuMicros.toFixed(0)} | ${bare.dbCpuMicros.toFixed(0)} | ${stalls(bare)}`,
        `${formatLoad(`${setup}: POST /v1/users/{id}/withdrawals, ${concurrency} in flight, round ${round}`, withdrawal)} ${withdrawal.cpuMicros.toFixed(0)} | ${withdrawal.dbCpuMicros.toFixed(0)} | ${stalls(withdrawal)}`,
      );
      console.error(rows.at(-2));
      console.error(rows.at(-1));
      ratios.push(withdrawal.perSecond / bare.perSecond);
      p99s.push(withdrawal.p99Ms);
      withdrawalCommands.set(setup, { commands: withdrawal.commands, requests: withdrawal.requests });
    }
    atHighest = { ratio: median(ratios), p99Ms: median(p99s), highestP99Ms: Math.max(...p99s) };
    const percents = ratios.map((x) => `${(x * 100).toFixed(0)}%`).join(", ");
    const p99Text = p99s.map((x) => x.toFixed(0)).join(", ");
    const leftText = settles ? `; step jobs left when each withdrawal run ended: ${left.join(", ")}` : "";
    summary.push(
      `- ${concurrency} in flight: ${(median(ratios) * 100).toFixed(0)}% (rounds: ${percents}), withdrawal p99 median ${median(p99s).toFixed(0)} ms (rounds: ${p99Text} ms)${leftText}`,
    );
  }
  return atHighest;
}

// Creation with the settlement in the same process: role all, the simulator stepping earlier withdrawals meanwhile.
const allSummary: string[] = [];
const noGoal: Goal = { ratio: 0, p99Ms: 0, highestP99Ms: 0 };
const allGoal = PARTS.has("all") ? await measure("all role", allSummary, true) : noGoal;
await stop(service.child);

// Phase 2: settlement. An API-role process opens the deposits (due at once: their steps wait, no worker runs);
// then a worker-role process starts and settles them; measured from its start to the last completion. That first
// backlog meets a fresh process (its code not yet compiled by V8's optimizing tiers, its heap not yet grown):
// the same worker then stops taking jobs, a second backlog is opened, and it takes jobs again and settles it, the
// figure of a worker that has been running (what a deployed worker is most of its life).
/** Opens DEPOSITS simulated deposits due at once, by an API-role process (stopped afterwards). */
async function openDeposits(): Promise<void> {
  service = await startService("api");
  let next = 0;
  const opener = async () => {
    while (next < DEPOSITS) {
      const i = next++;
      await call("POST", `/v1/sandbox/users/${users[i % USERS]}/deposits`, { amount_usd: 7.77, complete_after_seconds: 0 });
    }
  };
  await Promise.all(Array.from({ length: 32 }, opener));
  await stop(service.child);
}
const settledDeposits = () => db.collection("transactions").countDocuments({ type: "deposit", amount_cents: 777, status: "completed" });

interface BacklogSettlement {
  settleSeconds: number;
  /** CPU per settlement (µs), of the worker and of the database. */
  settlementCpuMicros: number;
  settlementDbCpuMicros: number;
  settlementCommands: Map<string, number>;
  loadAverages: [number, number];
}
/** Settles the backlog of DEPOSITS deposits opened just before by `worker`, taking jobs from now on. */
async function settleBacklog(worker: Service): Promise<BacklogSettlement> {
  const settledBefore = await settledDeposits();
  const [loadAtStart] = loadavg() as [number];
  await worker.commands();
  const started = performance.now();
  const workerCpuAtStart = cpuSecondsOf(worker.pid);
  const dbCpuAtStart = cpuSecondsOf(database.child.pid!);
  while (await anyStepLeft()) {
    if (performance.now() - started > 120_000) throw new Error(`${await stepsLeft()} of ${DEPOSITS} deposits left unsettled after 120 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const settleSeconds = (performance.now() - started) / 1000;
  const perSettlement = (seconds: number) => (seconds / DEPOSITS) * 1e6;
  const settlementCpuMicros = perSettlement(cpuSecondsOf(worker.pid) - workerCpuAtStart);
  const settlementDbCpuMicros = perSettlement(cpuSecondsOf(database.child.pid!) - dbCpuAtStart);
  const settled = (await settledDeposits()) - settledBefore;
  if (settled !== DEPOSITS) throw new Error(`${settled} of ${DEPOSITS} deposits settled with no step job left`);
  return {
    settleSeconds,
    settlementCpuMicros,
    settlementDbCpuMicros,
    settlementCommands: await worker.commands(),
    loadAverages: [loadAtStart, (loadavg() as [number])[0]],
  };
}

async function settleDeposits(extraEnv: Record<string, string> = {}) {
  await openDeposits();
  const workerStarted = performance.now();
  const worker = await startService("worker", extraEnv);
  const startSeconds = (performance.now() - workerStarted) / 1000;
  const cold = await settleBacklog(worker);
  const workerCpu = cpuSecondsOf(worker.pid);
  await worker.pauseJobs();
  await openDeposits();
  await worker.resumeJobs();
  const warm = await settleBacklog(worker);
  await stop(worker.child);
  return { cold, warm, startSeconds, workerCpu };
}
const settlement = PARTS.has("settlement") ? await settleDeposits() : null;
if (settlement)
  console.error(`settlement: ${describeBacklog("fresh worker", settlement.cold)}; ${describeBacklog("running worker", settlement.warm)}`);
/** One backlog's figures, for the console. */
function describeBacklog(which: string, b: BacklogSettlement): string {
  const [from, to] = b.loadAverages;
  return `${which} ${(DEPOSITS / b.settleSeconds).toFixed(0)}/s, per settlement ${b.settlementCpuMicros.toFixed(0)} µs of the worker's CPU and ${b.settlementDbCpuMicros.toFixed(0)} µs of the database's (load average ${from.toFixed(1)} to ${to.toFixed(1)})`;
}
// BENCH_SETTLEMENT_VARIANTS: settings of the worker to compare, as "A=1,B=2;A=3" (SVC_* variables, one variant
// per `;`): after the settlement above, three more rounds of each in turn on the same database, printed (not
// written to the results file). Rounds in turn, minutes apart, make a comparison on a shared machine fairer.
const variants = process.env.BENCH_SETTLEMENT_VARIANTS?.split(";") ?? [];
for (let round = 1; variants.length > 0 && round <= 3; round++) {
  for (const variant of variants) {
    const env = Object.fromEntries(variant.split(",").map((setting) => setting.split("=") as [string, string]));
    const { cold, warm } = await settleDeposits(env);
    console.error(`settlement, ${variant}, round ${round}: ${describeBacklog("fresh worker", cold)}; ${describeBacklog("running worker", warm)}`);
  }
}

// Phase 3, creation alone: an API-role process creates; each withdrawal's steps wait as a job for a worker, and
// none runs (last, so that no worker of the phases before takes them up while measured).
const apiSummary: string[] = [];
let apiGoal = noGoal;
if (PARTS.has("api")) {
  service = await startService("api");
  apiGoal = await measure("api role", apiSummary, false);
  await stop(service.child);
}
const created = await db.collection("transactions").countDocuments({ type: "withdrawal" });
const balances = await db
  .collection("users")
  .find({ _id: { $in: users as never[] } }, { projection: { ledger: 1 } })
  .toArray();
const pendingIn = balances.reduce((sum, u) => sum + (u.ledger?.pending_in_cents ?? 0), 0);
const inflightCounts = balances.map((u) => (u.ledger?.inflight_ids as unknown[] | undefined)?.length ?? 0);
const inflightAfter = inflightCounts.reduce((a, b) => a + b, 0);
const maxInflight = Math.max(0, ...inflightCounts);
const loadAfter = loadavg();
await client.close();
database.child.kill("SIGTERM");

const noBacklog: BacklogSettlement = {
  settleSeconds: Number.NaN,
  settlementCpuMicros: Number.NaN,
  settlementDbCpuMicros: Number.NaN,
  settlementCommands: new Map<string, number>(),
  loadAverages: [Number.NaN, Number.NaN],
};
const { cold, warm, startSeconds, workerCpu } = settlement ?? { cold: noBacklog, warm: noBacklog, startSeconds: Number.NaN, workerCpu: Number.NaN };
const commandsSection = COUNTED
  ? [
      "Commands the service sent, counted by its driver's command monitoring during the runs (shapes without values;",
      "`<id>` stands for a transaction's id in a field path):",
      "",
      ...[...withdrawalCommands].flatMap(([setup, { commands, requests }]) =>
        commandTable(
          `${setup}, the last withdrawal run at ${CONCURRENCY_LEVELS.at(-1)} in flight${setup.startsWith("all") ? " (with the settlement of earlier withdrawals)" : ""}`,
          commands,
          requests,
          "withdrawal",
        ),
      ),
      ...[...writtenEndToEnd].flatMap(([setup, { written, requests }]) => [
        `Statements of the service's write commands per withdrawal, end to end: ${setup}, the last withdrawal run and what`,
        "followed it until its last step job had run (the settlement, the sweeps of that time and the request log), by",
        "command and collection: each document inserted, each update or deletion (one statement may match many documents:",
        "a lock of the due step jobs, the removal of finished ones).",
        "",
        ...commandTable(`${setup}, the last withdrawal run with its settlement`, written, requests, "withdrawal", {
          what: "statements",
          by: "command and collection",
        }),
      ]),
      ...commandTable("Settlement by one worker that has been running (below)", warm.settlementCommands, DEPOSITS, "settled deposit"),
    ].join("\n")
  : "Commands per withdrawal and per settlement: counted only in a run with `BENCH_COMMANDS=1` (not this one): the driver's\ncommand monitoring decodes every reply a second time, CPU the service does not spend under `npm start`.\n";
const percent = (x: number) => `${(x * 100).toFixed(0)}%`;
const report = `# Withdrawal creation against a bare insert route; simulated-deposit settlement

Code: ${codeRevision(["src", "gen", "bench"])}.

Machine: ${machineDescription()}; shared with other sessions (busy). ${machineTools()}. Load average (1, 5, 15 min):
${loadBefore.map((l) => l.toFixed(2)).join(", ")} when the runs started, ${loadAfter.map((l) => l.toFixed(2)).join(", ")} when they ended.

Rounds: ${ROUNDS} at each level, ${DURATION_MS / 1000} s each; ${USERS.toLocaleString("en-US")} users; two backlogs of ${DEPOSITS} deposits settled.

Method (\`npm run bench withdrawals\`, bench/withdrawals.bench.ts), each part in its own process:

- The embedded database (src/embedded-mongo/cli.ts, in memory).
- The service (bench/withdrawals-service.ts): Svc as \`npm start\` runs it, role \`all\` (API and jobs), request logs
  at the shipped level to /dev/null, and beside it, in the same process and on the same database, a bare Fastify
  route \`POST /bare\` doing one \`insertOne\` of a transaction-sized document.
- The load generator (bench/withdrawals-load.ts): closed-loop HTTP/1.1 keep-alive connections, as many as
  requests in flight, ${DURATION_MS / 1000} s per run after a warm-up (3 s of the bare route, and one withdrawal for every user: a
  user's first withdrawal in a process reads its wallet, the later ones do not); the bare route and the withdrawals
  measured in turn at each level, ${ROUNDS} rounds of the pair, and the median of the rounds reported beside each. In
  role all each run starts once every step job of the runs before it has run (the process settles what they left):
  a withdrawal run carries the settlement of its own withdrawals while it lasts, not a backlog of earlier runs, and
  a bare run none (runs before 2026-11-28 03:30 UTC did not wait: a bare run then paid for the settlement of the
  withdrawals before it, which lowered the bare rate and raised the ratio, and a withdrawal run for the backlog).
  (h2load cannot send a fresh Idempotency-Key per request, which this measure needs, so the generator is Node's.)
- Each withdrawal: sandbox key, a fresh Idempotency-Key, \`{"amount_usd": 1}\`, the ${USERS.toLocaleString("en-US")} users in turn (each
  approved and funded with 1,000,000.00 beforehand).
- Two deployments, each against the bare route in the same process: **api role**, creation alone (each
  withdrawal's steps are left as a job for a worker, and none runs); **all role** (what the goal names),
  the single-process default, where the sandbox simulator moves each withdrawal to \`processing\` after 1 s and
  settles it at 2 s in the same process while the load runs, so that work is part of the figure.
- CPU µs/request: the CPU time (all threads) of the service process and of the database process during the
  run, per answered request (in role all, the settlement of the run's withdrawals that happens during it included).
- Where a request's wait comes from: the service's event-loop delay (how late its loop ran what was due: its
  stalls, which every request in flight waits through) and a ping of the database every 20 ms from the bench's
  process (how long the database holds a short command behind the one it is running, such as a settlement batch).

| run | requests/s | p50 ms | p99 ms | requests | errors | service CPU µs/request | database CPU µs/request | service event-loop delay p99 / max ms | database ping p99 / max ms |
|---|---|---|---|---|---|---|---|---|---|
${rows.join("\n")}

Withdrawal creation throughput / bare insert throughput at each level (the median of the rounds, then each round):

api role (creation alone):

${apiSummary.join("\n")}

all role (creation with the simulator's settlement in the same process):

${allSummary.join("\n")}

The goal, role all (the default) at ${CONCURRENCY_LEVELS.at(-1)} in flight: at least 35% of the bare route and p99 under 250 ms. Here
**${percent(allGoal.ratio)}** with a p99 of **${allGoal.p99Ms.toFixed(0)} ms** (medians of the rounds): ${allGoal.ratio >= 0.35 && allGoal.p99Ms < 250 ? "met" : "not met"}; the highest round's p99
${allGoal.highestP99Ms.toFixed(0)} ms (creation alone, role api: ${percent(apiGoal.ratio)}, p99 ${apiGoal.p99Ms.toFixed(0)} ms, the highest ${apiGoal.highestP99Ms.toFixed(0)} ms). ${created} withdrawals were created in all.

## Where the time goes

Per withdrawal, what the database is asked (role api: the request only; role all adds the settlement):

| phase | operations |
|---|---|
| the request | the Idempotency-Key's claim and stored answer, the insert of the transaction's step job (Agenda's \`jobs\`, before the opening), the opening (a conditional update of the user document, which holds the wallet's balance and its transactions in flight), the projection: five writes in four round trips (the projection goes with the stored answer), each group-committed with those of concurrent requests (one command per batch) |
| its settlement (role all: two runs of its step job, at 1 s and 2 s) | per run: the lock of its job (a find, an update and a find for the due jobs of the moment), the read of the user holding the transaction (one query for the runs of the moment), the conditional update of the user document (one command for the moves of the moment); after the move that settles it, its projection and its events' insertion into the event log, then one update of the user document that compacts the transaction and removes the events from the outbox; the job's state saved when the run ends, and the job removed after its last run |

${commandsSection}
What changed since the first measurement (creation at 8% to 12% of the bare route, service and database each 5
to 10 ms of CPU per withdrawal; 7 commands per request and about 30 in the settlement):

- The steps are Agenda jobs, one per transaction (an earlier version had two, each saved through Agenda's unique
  upsert, which scanned every ledger job: about 17 commands per withdrawal; a later one timed them in process from
  the transaction's \`next_step_at\`): the job is a plain insert under a unique index on the transaction id,
  group-committed with the jobs of concurrent openings (an upsert cost several times more on the embedded
  database), and Agenda's change stream no longer looks up the full document of every job update.
- A new transaction on a wallet the process has seen is opened without a read, and the openings of concurrent
  requests share one command (the update command reports how many matched: a batch that all matched answers
  each; otherwise each looks itself up). Projections and compactions are group-committed too.
- Ledger writes read back three fields instead of the whole user document.
- The embedded database: \`$push\` on its fast update path (mingo's updater cost ~60% of a ledger write), plain
  comparison filters and plain inclusion projections without a mingo query, and updates that recompute only the
  indexes whose fields changed and move only the index entries that differ.
- ${USERS.toLocaleString("en-US")} users (first 100, then 1,000): each user document holds its transactions in flight, and in the api
  role nothing settles, so with few users each accumulated dozens to hundreds, which made every write of it
  slower; a real project has many users with a few in flight each. This run ended the api phase with
  ${(inflightAfter / USERS).toFixed(1)} in flight per user on average (${maxInflight} at most).
- The embedded database indexed an array's elements with a pairwise deduplication, quadratic in the in-flight ids
  of a user document; it is now linear (one canonical string per element).
- The projection of a new withdrawal is written together with the Idempotency-Key's stored answer (one round trip
  fewer; the answer still waits for both). Per request: the REST method's context builds no Headers nor abort
  signals unless read, log lines skip the personal-data patterns when no pattern can match, and the key's claim
  takes its seed from Node's entropy pool (randomUUID) instead of a fresh random buffer.
- The settlement by batches. Counted with the driver's command monitoring, a settled deposit cost 3.9 commands
  (a \`find\` of its holder and a \`findAndModify\` of its move each, the rest group-committed) and 5.0 ms of
  the worker's CPU with 4.1 ms of the database's (1,000 users, 3,000 deposits, load average 15-17); a profile of
  the worker showed the driver and BSON as most of its busy time, our code a few percent. Now the runs of the
  step jobs read their transactions' holders with one query (only the owner's fields, its outbox and those
  transactions) and send their moves as one conditional update; both write one batch at a time, so what the
  runs ask while one is under way goes into the next (Agenda starts a batch's runs one per event-loop turn). A
  mover learns that its write applied from the batch's match count, or, when some move of the batch did not
  match, from the token its write leaves beside the transaction (\`ledger.moves\`), so only the winner of two
  concurrent moves relays events. The settlement's events are logged while the transaction is projected and
  leave the outbox in the write that compacts it (one write of the user document instead of two). Agenda's save
  at the start of each run is not written (its lock is already stored; Agenda's stop now leaves a running job
  locked until the run's end is saved). The ledger sweep reads versions, projects and compacts a page of 100
  users at a time: it sent about three commands per user with a transaction older than \`SVC_RELAY_STALE_MS\`,
  which at the start of the settlement phase is every user with a deposit (838 of the 11,708 commands of such a
  run). Same runs after the change: about 1.0 command per settled deposit, 2.1-3.2 ms of the worker's CPU and
  2.8-3.9 ms of the database's.
- The caches with short lives (the API key and its organization, the project's settings) load an expired entry
  once for the requests that miss it together: every expiry under load sent one lookup per request in flight,
  which was 0.6 of the 0.8 commands per API-role withdrawal (0.26 now).
- Profiled (\`--cpu-prof\` on the service and the database, one round): a settlement cost 1.8-2.0 ms of the
  worker's CPU and 2.1-2.5 ms of the database's, 0.8-0.9 commands (load average 9-12). Since then: the steps run
  250 at once (\`SVC_LEDGER_STEP_CONCURRENCY\`, beside the other jobs' 50), so their batched reads and writes are
  about three times larger and fewer (0.25 commands per settlement); Agenda's \`debug\` loggers no longer probe the
  terminal (an isatty system call) for each logger Agenda extends, several per run (3% of the worker's CPU); the
  ledger sweep reads only the users' transactions in flight and their \`opens\`, not whole user documents; a
  transaction in flight is looked up by its key instead of building the user's whole ledger state; a compaction of
  one transaction pulls its id as a plain value (the \`$in\` made the database compile a query for every write),
  and the job locks and holders' lookups get all their documents in one reply (no getMore). The bench itself
  watched the settlement by counting the settled transactions ten times a second, an aggregation over the whole
  collection in the database process that counted in its CPU per settlement: it now checks whether a step job is
  left (one index lookup).
  The same code run with \`SVC_LEDGER_STEP_CONCURRENCY=50\` right after a run at 250 (17:22 to 17:30 UTC, load
  average 2.7 to 5.2): the settlement at the same rate (392/s against 397/s, the machine shared) with 0.93
  commands, 1,863 µs of the worker's CPU and 1,640 µs of the database's per settlement, against 0.26, 1,397 µs and
  1,577 µs at 250; creation in role all at 128 in flight 36% of the bare route (28%, 44%) against 43%, but at 32
  in flight 39% against 19%, with 2.3-2.7 ms of the service's CPU per withdrawal against 3.1-3.7 ms. At 32 in
  flight the runs follow the warm-up, whose 10,000 withdrawals settle during them: whether the larger batches
  cost the service more there, or settle more of that backlog inside the measured runs instead of after them,
  these two runs do not tell.
- The sweeps (each a recurring job, every 5 s) read with one command each what the database could not find by an
  index: the ledger sweep's window (users in flight whose last ledger write falls in it) had no index for its time
  range and read every user, and the relay sweep's events not fanned out were planned on \`retention\`, which gives
  the same range and order, past every event fanned out. In role all at 128 in flight, timed per command in the
  database process (load average 4 to 8): 15-115 ms and 21-102 ms of the database's thread, growing with the users
  and events stored, while every request in flight waited behind them. Now each reads an index range of what it
  returns (0.1-0.9 ms and under 0.1 ms): the ledger sweep reads \`ledger_written\` (the users in flight by their last
  ledger write), and the embedded database's planner prefers \`fan_out_pending\` (partial: the events not fanned
  out), as mongod's plan race does.

What is left: a withdrawal is still four writes where the bare route makes one (and its request goes through
authentication, the rate limit, validation, the Idempotency-Key and a log line, which the bare route has not), so
the service spends between one and a half and two and a half times the bare route's CPU (role api); keeping the
Idempotency-Key's stored answer and the projection in one write would need a replay to find its answer in the
projection while the key's record still says running, a change to every keyed call's contract, not made. A
settlement still costs the database a write of the user document twice (move, compaction), a projection upsert,
an event insert, a job lock and removal, each with its index and change-stream work. The compaction's \`$pull\`
(the transaction's id, its logged events from the outbox) is on the database's fast update path, and the outbox's
condition (\`{id: {$in: [...]}}\`) is tested as a plain comparison, without compiling a query for every write
(until 2026-11-27 both went through mingo's updater, about a sixth of the database's busy time in a
settlement). In the worker, most of the rest is the
driver's and BSON's per-command and per-document work (the bulk API sizes every operation before serializing it)
and Agenda's per-run work (its Job object, its events, its \`debug\` loggers). 1,000 settlements/s need the worker
and the database together under 2 ms per settlement on two otherwise idle cores.

## Settlement of simulated deposits

${DEPOSITS} sandbox deposits (\`complete_after_seconds: 0\`) opened by a service in role \`api\` (their step jobs due at
once, no worker running), then a service in role \`worker\` (shipped settings: Agenda looks for due jobs every
1000 ms, locks each, and runs up to 250 steps at once, \`SVC_LEDGER_STEP_CONCURRENCY\`) started and settled them; then
that worker stopped taking jobs (its job queue stopped, as at shutdown), ${DEPOSITS} more were opened the same way, and
it took jobs again and settled them. The first backlog meets a process just started (start-up ${startSeconds.toFixed(1)} s not
counted), whose code V8 has not yet compiled to its optimizing tiers and whose heap is still growing; the second, a
worker that has been running, as a deployed one is most of its life.

| backlog | settled in | settlements/s | worker CPU µs/settlement | database CPU µs/settlement | load average (1 min) at start, end |
|---|---|---|---|---|---|
| the first, fresh worker | ${cold.settleSeconds.toFixed(2)} s | **${(DEPOSITS / cold.settleSeconds).toFixed(0)}** | ${cold.settlementCpuMicros.toFixed(0)} | ${cold.settlementDbCpuMicros.toFixed(0)} | ${cold.loadAverages.map((l) => l.toFixed(1)).join(", ")} |
| the second, the worker running | ${warm.settleSeconds.toFixed(2)} s | **${(DEPOSITS / warm.settleSeconds).toFixed(0)}** | ${warm.settlementCpuMicros.toFixed(0)} | ${warm.settlementDbCpuMicros.toFixed(0)} | ${warm.loadAverages.map((l) => l.toFixed(1)).join(", ")} |

Goal, at least 1,000/s: ${DEPOSITS / warm.settleSeconds >= 1000 ? "met" : "not met"} by the running worker, ${DEPOSITS / cold.settleSeconds >= 1000 ? "met" : "not met"} by the fresh one (runs before 2026-11-28 03:00 UTC
measured the fresh one only; with its start-up, ${((workerCpu / DEPOSITS) * 1e6).toFixed(0)} µs of its CPU per settlement). pending_in
left on the wallets afterwards: ${pendingIn} cents (expected 0).
`;
if (EVERY_PART) writeResults("withdrawals.md", report);
console.log(report);
process.exit(0);
