// Recovery points of moves: the service process is killed (SIGKILL) while cancel, complete and fail moves of
// pending transactions and approve and reject moves of KYC sessions, each with its own Idempotency-Key, are in
// flight, some applied without their client hearing of it. After a restart every client retries its move with
// the same key until answered: each answer is 200 with the object in the moved state (what the first life
// answered, when it did), never 409 invalid_state; every wallet's balance follows the ledger rule from its
// transactions (each balance change applied once) and every move's events are in the event log exactly once.
// Both lives are API processes: no ledger worker steps the pending transactions, so only these moves move them.
import { expect } from "chai";
import { MongoClient } from "mongodb";
import { until } from "../support/eventually.ts";
import { uniquePhone } from "../support/phones.ts";
import { freePort, startDatabaseProcess, startServiceProcess, type RunningProcess } from "../support/processes.ts";

const KEY = "svc_test_movecrashmovecrashmovecrash1";
/** Funded users, each with TRANSACTIONS_PER_USER pending transactions to move. */
const USERS = 6;
const TRANSACTIONS_PER_USER = 18;
/** Users with a KYC session to approve or reject. */
const KYC_USERS = 48;

type MoveKind = "cancel" | "complete" | "fail" | "approve" | "reject";

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

interface Move {
  key: string;
  kind: MoveKind;
  /** The transaction or KYC session moved. */
  target: string;
  userId: string;
  type: "deposit" | "withdrawal" | "kyc_session";
  path: string;
  body: Record<string, unknown>;
  /** The status the move leaves its object in. */
  to: string;
  started: boolean;
  /** What the first life answered, when it did. */
  first: Answer | null;
  final: Answer | null;
}

interface StoredTransaction {
  _id: string;
  user_id: string;
  type: "deposit" | "withdrawal";
  status: string;
  amount_cents: number;
  fee_cents: number;
}

const TO: Record<MoveKind, string> = { cancel: "canceled", complete: "completed", fail: "failed", approve: "approved", reject: "rejected" };

/** The events a transaction has once settled (sorted), or a KYC decision's. */
function expectedEvents(type: Move["type"], status: string): string[] {
  if (type === "kyc_session") return [status === "approved" ? "kyc.approved" : "kyc.rejected"];
  if (type === "deposit") return status === "completed" ? ["transaction.completed", "transaction.received"] : ["transaction.received"];
  if (status === "completed") return ["transaction.completed", "withdrawal.completed"];
  return status === "failed" ? ["withdrawal.failed"] : [];
}

describe("moves across a crash (SIGKILL)", function () {
  this.timeout(90_000);
  let database: (RunningProcess & { uri: string }) | null = null;
  let service: RunningProcess | null = null;
  let client: MongoClient | null = null;

  after(async () => {
    await service?.kill("SIGKILL");
    await client?.close();
    await database?.kill();
  });

  it("answers every retried move with its object in the moved state, never 409; balances and events once", async () => {
    const startedAt = Date.now();
    const phase = (name: string) => {
      if (process.env.SVC_TEST_VERBOSE) console.log(`move-crash: ${name} at ${Date.now() - startedAt} ms`);
    };
    database = await startDatabaseProcess();
    const uri = `${database.uri.replace(/\/?$/, "")}/svc_move_crash`;
    client = await MongoClient.connect(uri);
    const db = client.db();
    const env = {
      SVC_SANDBOX_KEY: KEY,
      SVC_ROLE: "api",
      SVC_IDEMPOTENCY_LOCK_MS: "1000",
      PORT: String(await freePort()),
      GRPC_PORT: String(await freePort()),
    };
    let running = await startServiceProcess(uri, env);
    service = running;
    const call = async (path: string, body: unknown = {}, method = "POST") => {
      const response = await fetch(`${running.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
        ...(method === "GET" ? {} : { body: JSON.stringify(body) }),
      });
      const answer = { status: response.status, body: (await response.json()) as any };
      if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
      return answer.body;
    };

    // Funded users (KYC approved through the sandbox, 1,000 completed by hand), each with pending withdrawals and
    // deposits that complete in an hour; users with a KYC session requires_input.
    const moves: Move[] = [];
    const fundedUsers = await Promise.all(
      Array.from({ length: USERS }, async (_, u) => {
        const user = await call("/v1/users", { phone: uniquePhone() });
        const session = await call(`/v1/users/${user.id}/kyc-sessions`);
        await call(`/v1/sandbox/kyc-sessions/${session.id}/approve`);
        const funding = await call(`/v1/sandbox/users/${user.id}/deposits`, { amount_usd: 1000, complete_after_seconds: 3600 });
        await call(`/v1/sandbox/transactions/${funding.id}/complete`);
        const opening = Array.from({ length: TRANSACTIONS_PER_USER }, async (_, i) => {
          const n = u * TRANSACTIONS_PER_USER + i;
          const withdrawal = i % 3 !== 2;
          const opened = withdrawal
            ? await call(`/v1/users/${user.id}/withdrawals`, { amount_usd: 5 + (n % 9), description: `move crash ${n}` })
            : await call(`/v1/sandbox/users/${user.id}/deposits`, {
                amount_usd: 10 + (n % 7),
                fee_usd: n % 2 ? 0.25 : 0,
                complete_after_seconds: 3600,
              });
          const kind: MoveKind = withdrawal ? (["cancel", "complete", "fail"] as const)[n % 3]! : n % 2 ? "complete" : "fail";
          const path = kind === "cancel" ? `/v1/transactions/${opened.id}/cancel` : `/v1/sandbox/transactions/${opened.id}/${kind}`;
          const body = kind === "fail" ? { failure_code: "crash_test" } : {};
          moves.push({
            key: `move-crash-${n}`,
            kind,
            target: opened.id,
            userId: user.id,
            type: withdrawal ? "withdrawal" : "deposit",
            path,
            body,
            to: TO[kind],
            started: false,
            first: null,
            final: null,
          });
        });
        await Promise.all(opening);
        return user.id as string;
      }),
    );
    await Promise.all(
      Array.from({ length: KYC_USERS }, async (_, k) => {
        const user = await call("/v1/users", { phone: uniquePhone() });
        const session = await call(`/v1/users/${user.id}/kyc-sessions`);
        const kind: MoveKind = k % 2 ? "reject" : "approve";
        const body = kind === "reject" ? { reason: `crash ${k}` } : {};
        moves.push({
          key: `kyc-move-crash-${k}`,
          kind,
          target: session.id,
          userId: user.id,
          type: "kyc_session",
          path: `/v1/sandbox/kyc-sessions/${session.id}/${kind}`,
          body,
          to: TO[kind],
          started: false,
          first: null,
          final: null,
        });
      }),
    );
    phase("set up");
    // Interleave transaction and KYC moves, so the kill finds both in flight.
    const numberOf = (move: Move) => Number(move.key.replace(/\D/g, ""));
    moves.sort((a, b) => numberOf(a) - numberOf(b) || (a.key < b.key ? -1 : 1));

    /** One try: the answer, "busy" while the key is held by a run, null when the process did not answer. */
    const attempt = async (move: Move): Promise<Answer | "busy" | null> => {
      const response = await fetch(`${running.baseUrl}${move.path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", "idempotency-key": move.key },
        body: JSON.stringify(move.body),
      }).catch(() => null);
      if (!response) return null;
      const body = (await response.json().catch(() => null)) as (Record<string, unknown> & { error?: { code: string } }) | null;
      if (body === null) return null;
      if (response.status === 409 && body.error?.code === "idempotency_in_progress") return "busy";
      if (response.status !== 200) throw new Error(`${move.key} (${move.kind} ${move.target}): answered ${response.status} ${JSON.stringify(body)}`);
      return { status: response.status, body };
    };

    // The burst of moves, killed once a good part of them is applied.
    const statusOf = async (move: Move): Promise<string> => {
      if (move.type === "kyc_session") {
        const user = await db.collection("users").findOne({ _id: move.userId as never }, { projection: { kyc_sessions: 1 } });
        return (user!.kyc_sessions as { id: string; status: string }[]).find((s) => s.id === move.target)!.status;
      }
      const holder = await db
        .collection("users")
        .findOne({ _id: move.userId as never }, { projection: { [`ledger.inflight.${move.target}.status`]: 1 } });
      const inflight = holder?.ledger?.inflight?.[move.target]?.status as string | undefined;
      return inflight ?? String((await db.collection("transactions").findOne({ _id: move.target as never }))!.status);
    };
    const appliedCount = async () => {
      const settled = await db.collection("transactions").countDocuments({ status: { $in: ["completed", "failed", "canceled"] } });
      const decided = await db.collection("users").countDocuments({ kyc_status: { $in: ["approved", "rejected"] } });
      return settled - USERS + decided - USERS;
    };
    let next = 0;
    let stopped = false;
    const burst = async () => {
      while (next < moves.length && !stopped) {
        const move = moves[next++]!;
        move.started = true;
        const answer = await attempt(move).catch(() => null);
        if (answer !== null && answer !== "busy") move.first = answer;
      }
    };
    const workers = Array.from({ length: 24 }, burst);
    const caught = await until(async () => (await appliedCount()) >= moves.length / 3, 20_000);
    // No move starts after this: those started are in flight when the kill lands, or answered just before.
    stopped = true;
    await running.kill("SIGKILL");
    await Promise.all(workers);
    expect(caught, "moves were being applied when the process was killed").to.equal(true);

    // In flight at the kill: started, unanswered. Applied: the database shows them moved (nothing else moves them).
    const inFlight = moves.filter((m) => m.started && m.first === null);
    const appliedUnheard: Move[] = [];
    for (const move of inFlight) if ((await statusOf(move)) === move.to) appliedUnheard.push(move);
    const counts = {
      moves: moves.length,
      answered: moves.filter((m) => m.first !== null).length,
      inFlight: inFlight.length,
      appliedUnheard: appliedUnheard.length,
      appliedUnheardKyc: appliedUnheard.filter((m) => m.type === "kyc_session").length,
      notStarted: moves.filter((m) => !m.started).length,
    };
    if (process.env.SVC_TEST_VERBOSE) console.log("move-crash at the kill:", JSON.stringify(counts));
    expect(counts.appliedUnheard, `some moves were applied without their client hearing of it: ${JSON.stringify(counts)}`).to.be.greaterThan(0);

    // Second life: every client retries its move with the same key until answered.
    phase("killed");
    running = await startServiceProcess(uri, env);
    service = running;
    phase("restarted");
    let retry = 0;
    const retrier = async () => {
      while (retry < moves.length) {
        const move = moves[retry++]!;
        let answer: Answer | "busy" | null = null;
        const answered = await until(async () => {
          answer = await attempt(move);
          return answer !== null && answer !== "busy";
        }, 10_000);
        expect(answered, `${move.key} was answered after the restart`).to.equal(true);
        move.final = answer;
        expect(move.final!.body.status, `${move.key}: ${move.kind} answers the ${move.type} ${move.to}`).to.equal(move.to);
        expect(move.final!.body.id).to.equal(move.target);
        if (move.first) expect(move.final, `${move.key}: the retry answers what the first run answered`).to.deep.equal(move.first);
      }
    };
    await Promise.all(Array.from({ length: 16 }, retrier));
    phase("retried");

    // Each move applied once: every transaction in the state its move left, and each wallet's balance as the
    // ledger rule computes it from its transactions.
    const stored = await db.collection<StoredTransaction>("transactions").find({}).toArray();
    const byId = new Map(stored.map((t) => [t._id, t]));
    for (const move of moves.filter((m) => m.type !== "kyc_session")) expect(byId.get(move.target)?.status, move.key).to.equal(move.to);
    for (const userId of fundedUsers) {
      const own = stored.filter((t) => t.user_id === userId);
      const sum = (type: string, statuses: string[], gross: boolean) =>
        own
          .filter((t) => t.type === type && statuses.includes(t.status))
          .reduce((s, t) => s + t.amount_cents + (gross ? t.fee_cents : -t.fee_cents), 0);
      const pendingOut = sum("withdrawal", ["pending", "processing"], true);
      const available = sum("deposit", ["completed"], false) - sum("withdrawal", ["completed"], true) - pendingOut;
      const wallets = await call(`/v1/users/${userId}/wallets`, undefined, "GET");
      expect(wallets.data[0].balance, `the balance of ${userId}`).to.deep.equal({
        available_usd: available / 100,
        pending_in_usd: sum("deposit", ["pending"], false) / 100,
        pending_out_usd: pendingOut / 100,
      });
    }

    // Every outbox relayed (a retry that found its move applied relays what its first run left), and each
    // move's events in the log exactly once.
    const relayed = await until(async () => (await db.collection("users").countDocuments({ "outbox.0": { $exists: true } })) === 0, 5000);
    expect(relayed, "every outbox relayed").to.equal(true);
    const events = await db
      .collection("events")
      .find({ type: { $regex: /^(transaction|withdrawal|kyc)\./ } })
      .toArray();
    const eventsOf = new Map<string, string[]>();
    for (const event of events) {
      const object = (event.data as { object: { id?: string; user_id: string; object: string } }).object;
      const about = object.object === "kyc" ? object.user_id : object.id!;
      eventsOf.set(about, [...(eventsOf.get(about) ?? []), String(event.type)]);
    }
    for (const move of moves) {
      const about = move.type === "kyc_session" ? move.userId : move.target;
      expect((eventsOf.get(about) ?? []).sort(), `the events of ${move.key} (${move.kind} ${move.type})`).to.deep.equal(
        expectedEvents(move.type, move.to),
      );
    }
  });
});
