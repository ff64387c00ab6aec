// The ledger across a crash: the service process is killed (SIGKILL) mid-burst of simulated deposits and
// withdrawals sent with Idempotency-Keys, some written without their client hearing of it. After a restart every
// client retries with the same key and body until answered: each is answered what its first run answered (the
// same transaction id), no transaction exists that no client was answered, and once quiet (jobs done, sweepers
// run) the ledger invariant of docs/contract.md holds for every wallet, every transaction has its events
// exactly once in the event log, and every transaction still waiting for a step has that step's job.
import { expect } from "chai";
import { MongoClient } from "mongodb";
import { freePort, startDatabaseProcess, startServiceProcess, type RunningProcess } from "../support/processes.ts";
import { until } from "../support/eventually.ts";
import { uniquePhone } from "../support/phones.ts";
import { FINAL_STATUSES, type TransactionStatus } from "../../src/domain/money.ts";
import { TRANSACTION_STEP_JOB } from "../../src/ledger/transaction-step-job.ts";

const KEY = "svc_test_moneycrashmoneycrashmoney01";
const USERS = 8;
const OPERATIONS = 240;
const FUNDING_USD = 100;

interface Answer {
  status: number;
  id: string | null;
  code: string | null;
}

interface Operation {
  key: string;
  path: string;
  body: Record<string, unknown>;
  type: "deposit" | "withdrawal";
  /** What the first life answered, when it did. */
  first: Answer | null;
  /** What the retries of the second life ended in. */
  final: Answer | null;
}

interface StoredTransaction {
  _id: string;
  user_id: string;
  type: "deposit" | "withdrawal";
  status: string;
  amount_cents: number;
  fee_cents: number;
  version: number;
}

const isFinalStatus = (status: string) => FINAL_STATUSES.includes(status as TransactionStatus);

/** The operations of the burst: deposits settling after 1 s (a few after an hour) and withdrawals, 13.13 failing. */
function burstOperations(users: string[]): Operation[] {
  return Array.from({ length: OPERATIONS }, (_, i) => {
    const user = users[i % users.length]!;
    const key = `money-crash-${i}`;
    if (i % 2 === 0) {
      const body = { amount_usd: 10 + (i % 7), fee_usd: i % 3 === 0 ? 0.25 : 0, complete_after_seconds: i % 10 === 0 ? 3600 : 1 };
      return { key, path: `/v1/sandbox/users/${user}/deposits`, body, type: "deposit", first: null, final: null };
    }
    const body = { amount_usd: i % 5 === 1 ? 13.13 : 4 + (i % 11), description: `crash ${i}` };
    return { key, path: `/v1/users/${user}/withdrawals`, body, type: "withdrawal", first: null, final: null };
  });
}

describe("money across a crash (SIGKILL)", function () {
  this.timeout(120_000);
  let database: (RunningProcess & { uri: string }) | null = null;
  let service: RunningProcess | null = null;
  let client: MongoClient | null = null;

  after(async () => {
    await service?.kill("SIGKILL");
    await client?.close();
    await database?.kill();
  });

  it("answers every retry with the transaction its first run created; the invariant and the events hold once quiet", async () => {
    database = await startDatabaseProcess();
    const uri = `${database.uri.replace(/\/?$/, "")}/svc_money_crash`;
    client = await MongoClient.connect(uri);
    const db = client.db();
    const env = {
      SVC_SANDBOX_KEY: KEY,
      SVC_IDEMPOTENCY_LOCK_MS: "1000",
      SVC_JOB_POLL_MS: "100",
      // The lease of a step's job: the jobs the killed process held locked are run again this long after it locked them.
      SVC_JOB_LOCK_MS: "2000",
      PORT: String(await freePort()),
      GRPC_PORT: String(await freePort()),
    };

    // First life without sweepers: what a request leaves unfinished stays so until the second life.
    let running = await startServiceProcess(uri, { ...env, SVC_RELAY_SWEEP_MS: "3600000" });
    service = running;
    const call = async (method: string, path: string, body: unknown = {}, idempotencyKey?: string) => {
      const response = await fetch(`${running.baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${KEY}`,
          "content-type": "application/json",
          ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
        },
        body: method === "GET" ? null : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as any };
    };

    // Users with kyc_status approved through the sandbox KYC routes, each funded with a completed deposit.
    const users: string[] = [];
    const funding = new Set<string>();
    for (let i = 0; i < USERS; i++) {
      const user = await call("POST", "/v1/users", { phone: uniquePhone() });
      expect(user.status).to.equal(201);
      const session = await call("POST", `/v1/users/${user.body.id}/kyc-sessions`);
      expect(session.status).to.equal(201);
      const approved = await call("POST", `/v1/sandbox/kyc-sessions/${session.body.id}/approve`);
      expect(approved.status).to.equal(200);
      const deposit = await call("POST", `/v1/sandbox/users/${user.body.id}/deposits`, { amount_usd: FUNDING_USD, complete_after_seconds: 0 });
      expect(deposit.status, JSON.stringify(deposit.body)).to.equal(201);
      users.push(user.body.id);
      funding.add(deposit.body.id);
    }
    const funded = await until(async () => {
      const settled = await Promise.all([...funding].map((id) => call("GET", `/v1/transactions/${id}`)));
      return settled.every((r) => r.body.status === "completed");
    }, 10_000);
    expect(funded, "the funding deposits completed").to.equal(true);

    const operations = burstOperations(users);
    /** One try: the answer, "busy" while the key is held by a run, null when the process did not answer. */
    const attempt = async (operation: Operation): Promise<Answer | "busy" | null> => {
      const response = await fetch(`${running.baseUrl}${operation.path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "idempotency-key": operation.key },
        body: JSON.stringify(operation.body),
      }).catch(() => null);
      if (!response) return null;
      const body = (await response.json().catch(() => null)) as { id?: string; error?: { code: string } } | null;
      if (body === null) return null;
      if (response.status === 409 && body.error?.code === "idempotency_in_progress") return "busy";
      const answer = { status: response.status, id: body.id ?? null, code: body.error?.code ?? null };
      const expected =
        response.status === 201 || (operation.type === "withdrawal" && response.status === 409 && answer.code === "insufficient_funds");
      if (!expected) throw new Error(`${operation.key}: answered ${response.status} ${JSON.stringify(body)}`);
      return answer;
    };

    // The burst, killed once it is well under way.
    const transactions = db.collection<StoredTransaction>("transactions");
    let next = 0;
    let stopped = false;
    const burst = async () => {
      while (next < operations.length && !stopped) {
        const operation = operations[next++]!;
        const answer = await attempt(operation).catch(() => null);
        if (answer !== null && answer !== "busy") operation.first = answer;
      }
    };
    const workers = Array.from({ length: 16 }, burst);
    const caught = await until(async () => (await transactions.countDocuments({})) >= USERS + 60, 20_000);
    await running.kill("SIGKILL");
    stopped = true;
    await Promise.all(workers);
    expect(caught, "transactions were being written when the process was killed").to.equal(true);

    // Written in the ledger (the projection may lag behind it) without their client hearing of it.
    const ledgerIds = async () =>
      (
        await db
          .collection("users")
          .find({}, { projection: { "ledger.inflight_ids": 1 } })
          .toArray()
      ).flatMap((u) => (u.ledger?.inflight_ids ?? []) as string[]);
    const writtenIds = new Set([...(await transactions.distinct("_id")).map(String), ...(await ledgerIds())]);
    const heard = new Set(operations.flatMap((o) => (o.first?.id ? [o.first.id] : [])));
    const unheard = [...writtenIds].filter((id) => !funding.has(id) && !heard.has(id));
    expect(unheard.length, "some transactions were written without their client hearing of it").to.be.greaterThan(0);

    // Second life: sweepers every 100 ms; every client retries with the same key and body until answered.
    running = await startServiceProcess(uri, { ...env, SVC_RELAY_SWEEP_MS: "100", SVC_RELAY_STALE_MS: "0" });
    service = running;
    let retry = 0;
    const retrier = async () => {
      while (retry < operations.length) {
        const operation = operations[retry++]!;
        let answer: Answer | "busy" | null = null;
        const answered = await until(async () => {
          answer = await attempt(operation);
          return answer !== null && answer !== "busy";
        }, 15_000);
        expect(answered, `${operation.key} was answered after the restart`).to.equal(true);
        operation.final = answer;
        if (operation.first)
          expect(operation.final, `${operation.key}: the retry answers what the first run answered`).to.deep.equal(operation.first);
      }
    };
    await Promise.all(Array.from({ length: 8 }, retrier));

    // Every transaction written is one a client was answered, and each written in the first life was answered.
    const answeredIds = new Set(operations.flatMap((o) => (o.final?.id ? [o.final.id] : [])));
    expect(answeredIds.size, "one transaction per answered operation").to.equal(operations.filter((o) => o.final?.status === 201).length);
    for (const id of unheard) expect(answeredIds.has(id), `${id}, written unheard, answered to its retry`).to.equal(true);

    // Quiet: every outbox relayed, every transaction settled but the hour-long deposits, the projection caught up.
    const quiet = await until(async () => {
      const holders = await db.collection("users").find({}).toArray();
      if (holders.some((u) => (u.outbox ?? []).length > 0)) return false;
      // Only the hour-long deposits may still be pending, each with its step's job due in an hour: a one-second one
      // about to settle is not quiet yet.
      const steps = await db.collection("jobs").find({ name: TRANSACTION_STEP_JOB }).toArray();
      const dueAt = new Map(steps.map((job) => [String(job.data.transactionId), job.nextRunAt as Date | null]));
      const hourLong = (t: StoredTransaction & { id?: string }) =>
        t.type === "deposit" && t.status === "pending" && (dueAt.get(t.id ?? t._id)?.getTime() ?? 0) > Date.now() + 600_000;
      const inflight = holders.flatMap((u) => Object.values((u.ledger?.inflight ?? {}) as Record<string, StoredTransaction & { id: string }>));
      if (inflight.some((t) => !hourLong(t))) return false;
      const projected = await transactions.find({}).toArray();
      const versions = new Map(projected.map((t) => [t._id, t.version]));
      if (inflight.some((t) => versions.get(t.id) !== t.version)) return false;
      return projected.every((t) => isFinalStatus(t.status) || hourLong(t));
    }, 15_000);
    expect(quiet, "the service became quiet").to.equal(true);

    const stored = await transactions.find({}).toArray();
    expect(new Set(stored.map((t) => t._id))).to.deep.equal(new Set([...funding, ...answeredIds]));

    // The invariant, for every wallet.
    for (const user of users) {
      const own = stored.filter((t) => t.user_id === user);
      const sum = (list: StoredTransaction[], gross: boolean) => list.reduce((s, t) => s + t.amount_cents + (gross ? t.fee_cents : -t.fee_cents), 0);
      const deposits = own.filter((t) => t.type === "deposit");
      const withdrawals = own.filter((t) => t.type === "withdrawal");
      const pendingIn = sum(
        deposits.filter((t) => t.status === "pending"),
        false,
      );
      const pendingOut = sum(
        withdrawals.filter((t) => t.status === "pending" || t.status === "processing"),
        true,
      );
      const available =
        sum(
          deposits.filter((t) => t.status === "completed"),
          false,
        ) -
        sum(
          withdrawals.filter((t) => t.status === "completed"),
          true,
        ) -
        pendingOut;
      const wallets = await call("GET", `/v1/users/${user}/wallets`);
      expect(wallets.status).to.equal(200);
      expect(wallets.body.data[0].balance, `the balance of ${user}`).to.deep.equal({
        available_usd: available / 100,
        pending_in_usd: pendingIn / 100,
        pending_out_usd: pendingOut / 100,
      });
      expect(available).to.be.at.least(0);
    }

    // Every transaction's events, exactly once each, and no event about a transaction that does not exist.
    const events = await db
      .collection("events")
      .find({ type: { $in: ["transaction.received", "transaction.completed", "withdrawal.completed", "withdrawal.failed"] } })
      .toArray();
    const byTransaction = new Map<string, string[]>();
    for (const event of events) {
      const id = String((event.data as { object: { id: string } }).object.id);
      byTransaction.set(id, [...(byTransaction.get(id) ?? []), String(event.type)]);
    }
    const expectedTypes = (t: StoredTransaction): string[] => {
      if (t.type === "deposit") return t.status === "completed" ? ["transaction.completed", "transaction.received"] : ["transaction.received"];
      if (t.status === "completed") return ["transaction.completed", "withdrawal.completed"];
      return t.status === "failed" ? ["withdrawal.failed"] : [];
    };
    for (const t of stored)
      expect((byTransaction.get(t._id) ?? []).sort(), `the events of ${t.type} ${t._id} (${t.status})`).to.deep.equal(expectedTypes(t));
    expect(
      [...byTransaction.keys()].filter((id) => !stored.some((t) => t._id === id)),
      "events of unknown transactions",
    ).to.deep.equal([]);

    // The burst covered every outcome.
    const statuses = new Set(stored.map((t) => `${t.type}:${t.status}`));
    for (const outcome of ["deposit:pending", "deposit:completed", "withdrawal:completed", "withdrawal:failed"])
      expect(statuses.has(outcome), outcome).to.equal(true);
    expect(
      operations.some((o) => o.final?.code === "insufficient_funds"),
      "some withdrawals met insufficient_funds",
    ).to.equal(true);
  });
});
