// Agenda as the scheduler across SIGKILL and scale-out: every service process is killed with SIGKILL before a
// transaction's step (or a wallet retry) is due and started again; the step runs on time, once. Two worker
// processes share the steps of a burst, and none runs twice.
import { expect } from "chai";
import { MongoClient, type Db } from "mongodb";
import { JobQueue } from "../../src/jobs/job-queue.ts";
import { TRANSACTION_STEP_JOB } from "../../src/ledger/transaction-step-job.ts";
import { PROVISION_WALLET_JOB } from "../../src/wallets/wallet-provisioner.ts";
import { eventually, until } from "../support/eventually.ts";
import { uniquePhone } from "../support/phones.ts";
import { startDatabaseProcess, startServiceProcess, type RunningProcess } from "../support/processes.ts";

const SANDBOX_KEY = "svc_test_jobscrashjobscrashjobscrash01";
const LIVE_KEY = "svc_live_jobscrashjobscrashjobscrash01";
/**
 * How late a step may run after its due time, or after the restarted worker is ready when that is later (a loaded
 * machine may take longer to start the processes than the step's delay): the job poll (100 ms) and the load.
 */
const LATE_MS = 1500;

type Service = RunningProcess & { baseUrl: string };

async function call(base: string, method: string, path: string, body?: unknown, key = SANDBOX_KEY) {
  const response = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as any };
}

/** A sandbox user with kyc_status approved (through the sandbox KYC routes), funded with `amount` dollars. */
async function fundedUser(base: string, amount: number): Promise<string> {
  const user = await call(base, "POST", "/v1/users", { phone: uniquePhone() });
  expect(user.status).to.equal(201);
  const session = await call(base, "POST", `/v1/users/${user.body.id}/kyc-sessions`, {});
  expect((await call(base, "POST", `/v1/sandbox/kyc-sessions/${session.body.id}/approve`, {})).status).to.equal(200);
  const deposit = await call(base, "POST", `/v1/sandbox/users/${user.body.id}/deposits`, { amount_usd: amount, complete_after_seconds: 0 });
  expect(deposit.status).to.equal(201);
  await eventually(
    () => call(base, "GET", `/v1/transactions/${deposit.body.id}`),
    (r) => r.body.status === "completed",
    15_000,
  );
  return user.body.id as string;
}

/** The money events of the event log by transaction id, each type as often as logged. */
async function moneyEvents(db: Db): Promise<Map<string, string[]>> {
  const events = await db
    .collection("events")
    .find({ type: { $in: ["transaction.received", "transaction.completed", "withdrawal.completed", "withdrawal.failed"] } })
    .toArray();
  const byTransaction = new Map<string, string[]>();
  for (const event of events) {
    const id = String((event.data as { object: { id: string } }).object.id);
    byTransaction.set(id, [...(byTransaction.get(id) ?? []), String(event.type)].sort());
  }
  return byTransaction;
}

describe("Agenda jobs across SIGKILL and two workers", function () {
  this.timeout(120_000);
  let database: (RunningProcess & { uri: string }) | null = null;
  let client: MongoClient | null = null;
  let services: Service[] = [];
  let db: Db;
  let run = 0;

  const env = { SVC_SANDBOX_KEY: SANDBOX_KEY, SVC_LIVE_KEY: LIVE_KEY, SVC_JOB_POLL_MS: "100", SVC_JOB_LOCK_MS: "5000" };
  const start = async (uri: string, roles: string[]) => {
    // One after the other: the first bootstraps the Default project, the others adopt it.
    for (const role of roles) services.push(await startServiceProcess(uri, { ...env, SVC_ROLE: role }));
    return services.slice(-roles.length);
  };
  const killAll = async () => {
    await Promise.all(services.map((s) => s.kill("SIGKILL")));
    services = [];
  };

  beforeEach(async () => {
    database ??= await startDatabaseProcess();
    const uri = `${database.uri.replace(/\/?$/, "")}/svc_jobs_crash_${run++}`;
    client = await MongoClient.connect(uri);
    db = client.db();
  });

  afterEach(async () => {
    await killAll();
    await client?.close();
  });

  after(async () => {
    await database?.kill();
  });

  const uriOf = () => `${database!.uri.replace(/\/?$/, "")}/${db.databaseName}`;

  it("a transaction's steps run on time and once after every service process was killed before them", async () => {
    const [api] = await start(uriOf(), ["api", "worker"]);
    const user = await fundedUser(api!.baseUrl, 100);
    const deposit = await call(api!.baseUrl, "POST", `/v1/sandbox/users/${user}/deposits`, { amount_usd: 7, complete_after_seconds: 20 });
    const withdrawal = await call(api!.baseUrl, "POST", `/v1/users/${user}/withdrawals`, { amount_usd: 5 });
    expect([deposit.status, withdrawal.status]).to.deep.equal([201, 201]);
    await killAll();
    const killedAt = Date.now();
    const depositDue = Date.parse(deposit.body.created_at) + 20_000;
    expect(killedAt, "killed before the deposit's step").to.be.below(depositDue - 3000);

    // Each step is a job in the database, due at its time, whatever process wrote it.
    const jobs = db.collection("jobs");
    const jobOf = (id: string) => jobs.find({ name: TRANSACTION_STEP_JOB, "data.transactionId": id }).toArray();
    expect((await jobOf(deposit.body.id)).map((j) => j.nextRunAt.getTime())).to.deep.equal([depositDue]);
    // The withdrawal's job, unless its steps (at 1 s and 2 s) were all done before the kill on a slow machine.
    expect(await jobOf(withdrawal.body.id)).to.have.length.at.most(1);

    const [restarted] = await start(uriOf(), ["api", "worker"]);
    const readyAt = Date.now();
    const completed = await eventually(
      () => call(restarted!.baseUrl, "GET", `/v1/transactions/${deposit.body.id}`),
      (r) => r.body.status === "completed",
      30_000,
    );
    const completedAt = Date.parse(completed.body.updated_at);
    expect(completedAt, "not before its time").to.be.at.least(depositDue);
    expect(completedAt, "on time").to.be.below(Math.max(depositDue, readyAt) + LATE_MS);
    const withdrawn = await eventually(
      () => call(restarted!.baseUrl, "GET", `/v1/transactions/${withdrawal.body.id}`),
      (r) => r.body.status === "completed",
      10_000,
    );
    expect(withdrawn.body.status).to.equal("completed");

    // Once: the balance and the events.
    const wallets = await call(restarted!.baseUrl, "GET", `/v1/users/${user}/wallets`);
    expect(wallets.body.data[0].balance).to.deep.equal({ available_usd: 102, pending_in_usd: 0, pending_out_usd: 0 });
    // A step's events are relayed after the write the reads above saw: wait until both have two, then check which.
    const relayed = async () => {
      const byTransaction = await moneyEvents(db);
      return [deposit.body.id, withdrawal.body.id].every((id) => (byTransaction.get(id) ?? []).length >= 2);
    };
    await until(relayed, 5000);
    const events = await moneyEvents(db);
    expect(events.get(deposit.body.id)).to.deep.equal(["transaction.completed", "transaction.received"]);
    expect(events.get(withdrawal.body.id)).to.deep.equal(["transaction.completed", "withdrawal.completed"]);
    expect(await until(async () => (await jobs.countDocuments({ name: TRANSACTION_STEP_JOB })) === 0, 5000), "no step job left").to.equal(true);
  });

  it("a wallet retry runs on time and once after every service process was killed before it", async () => {
    const [api] = await start(uriOf(), ["api", "worker"]);
    const created = await call(api!.baseUrl, "POST", "/v1/users", { phone: uniquePhone() }, LIVE_KEY);
    expect(created.status).to.equal(201);
    // The state a failed first attempt leaves: the wallet pending and its first retry scheduled, as the
    // provisioner schedules it (the simulated custodian of a process cannot be told to fail).
    await db.collection("users").updateOne({ _id: created.body.id }, { $set: { wallet_status: "pending", wallets: [] } });
    const due = new Date(Date.now() + 15_000);
    const queue = new JobQueue(db, { pollIntervalMs: 60_000, lockLifetimeMs: 5000, maxConcurrency: 1, changeStreams: false });
    await queue.schedule(PROVISION_WALLET_JOB, { userId: created.body.id, retry: 1 }, due, ["userId", "retry"]);
    await killAll();
    expect(Date.now(), "killed before the retry").to.be.below(due.getTime() - 3000);

    const [restarted] = await start(uriOf(), ["api", "worker"]);
    const readyAt = Date.now();
    const ready = await eventually(
      () => call(restarted!.baseUrl, "GET", `/v1/users/${created.body.id}`, undefined, LIVE_KEY),
      (r) => r.body.wallet_status !== "pending",
      30_000,
    );
    expect(ready.body.wallet_status).to.equal("ready");
    const stored = await db.collection("users").findOne({ _id: created.body.id });
    expect(stored!.wallets, "one wallet: the retry ran once").to.have.length(1);
    const madeAt = (stored!.wallets[0].created_at as Date).getTime();
    expect(madeAt, "not before its time").to.be.at.least(due.getTime());
    expect(madeAt, "on time").to.be.below(Math.max(due.getTime(), readyAt) + LATE_MS);
    // Removed once its run is saved, a moment after the wallet was written.
    expect(await until(async () => (await db.collection("jobs").countDocuments({ name: PROVISION_WALLET_JOB })) === 0, 5000)).to.equal(true);
  });

  it("two worker processes share a burst's steps; none runs twice", async () => {
    const [api, first, second] = await start(uriOf(), ["api", "worker", "worker"]);
    const users = await Promise.all(Array.from({ length: 4 }, () => fundedUser(api!.baseUrl, 1000)));
    // Who locks the step jobs while they run: each worker's Agenda is named after its process.
    const lockers = new Set<string>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const locked = await db
          .collection("jobs")
          .find({ name: TRANSACTION_STEP_JOB, lockedAt: { $ne: null } }, { projection: { lastModifiedBy: 1 } })
          .toArray();
        for (const job of locked) if (job.lastModifiedBy) lockers.add(String(job.lastModifiedBy));
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const ids: string[] = [];
    const withdrawals = new Set<string>();
    await Promise.all(
      Array.from({ length: 120 }, async (_, i) => {
        const user = users[Math.floor(i / 2) % users.length]!;
        const answer =
          i % 2 === 0
            ? await call(api!.baseUrl, "POST", `/v1/sandbox/users/${user}/deposits`, { amount_usd: 3, complete_after_seconds: 1 })
            : await call(api!.baseUrl, "POST", `/v1/users/${user}/withdrawals`, { amount_usd: 2 });
        expect(answer.status, JSON.stringify(answer.body)).to.equal(201);
        ids.push(answer.body.id);
        if (i % 2 === 1) withdrawals.add(answer.body.id);
      }),
    );
    const settled = await until(
      async () => (await db.collection("transactions").countDocuments({ _id: { $in: ids as never[] }, status: "completed" })) === ids.length,
      30_000,
    );
    sampling = false;
    await sampler;
    expect(settled, "every transaction of the burst settled").to.equal(true);

    const pids = [first!.process.pid, second!.process.pid].map(String);
    expect([...lockers].map((name) => name.split(":").at(-1)).sort(), "both workers ran steps").to.deep.equal(pids.sort());
    // The events are relayed just after the settlement is written.
    const events = await eventually(
      () => moneyEvents(db),
      (logged) => ids.every((id) => (logged.get(id)?.length ?? 0) >= 2),
      10_000,
    );
    for (const id of ids) {
      const expected = withdrawals.has(id) ? ["transaction.completed", "withdrawal.completed"] : ["transaction.completed", "transaction.received"];
      expect(events.get(id), `the events of ${id}`).to.deep.equal(expected);
    }
    for (const user of users) {
      const wallets = await call(api!.baseUrl, "GET", `/v1/users/${user}/wallets`);
      // 15 deposits of 3 and 15 withdrawals of 2 per user, on 1000.
      expect(wallets.body.data[0].balance).to.deep.equal({ available_usd: 1015, pending_in_usd: 0, pending_out_usd: 0 });
    }
  });
});
