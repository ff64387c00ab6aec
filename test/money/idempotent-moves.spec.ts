// Moves of transactions with an Idempotency-Key whose first run was cut off (recovery points, as creations have):
// cancel, the sandbox's complete and fail, AdminService.SettleTransaction. Cut after its write (a crash, or a 5xx
// once written), the retry answers the moved transaction as the first run did, with the move's events and balance
// change once; cut before its write, the retry applies it; moved by anyone else (another key, no key, the
// simulator), the retry is 409 invalid_state as before.
import { toJson } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { expect } from "chai";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.ts";
import { TransactionSchema } from "../../gen/svc/v1/transactions_pb.ts";
import { eventually } from "../support/eventually.ts";
import { cutOff } from "../support/idempotency.ts";
import { failNextCall } from "../support/injected-failures.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { approvedUser, balanceOf, eventsOf } from "./support.ts";

/** What a move answered: 200 and the transaction (as JSON), or the error code. */
interface MoveAnswer {
  status: number;
  transaction: Record<string, unknown> | null;
  code: string | null;
}

interface MoveCase {
  name: string;
  /** The transaction the move applies to, opened pending. */
  opens: "deposit" | "withdrawal";
  to: "canceled" | "completed" | "failed";
  /** The move's events (with the opening's), sorted. */
  events: string[];
  run: (svc: TestService, id: string, key: string | null) => Promise<MoveAnswer>;
}

async function restMove(svc: TestService, path: string, key: string | null, body: unknown = {}): Promise<MoveAnswer> {
  const response = await svc.request("POST", path, { body, headers: key ? { "idempotency-key": key } : {} });
  return { status: response.status, transaction: response.status === 200 ? response.body : null, code: response.body?.error?.code ?? null };
}

async function settle(svc: TestService, id: string, key: string | null, outcome: "completed" | "failed"): Promise<MoveAnswer> {
  try {
    const answer = await svc.admin.settleTransaction(
      { id, outcome, ...(outcome === "failed" ? { failureCode: "account_closed" } : {}) },
      { headers: key ? { "idempotency-key": key } : {} },
    );
    return { status: 200, transaction: toJson(TransactionSchema, answer.transaction!) as Record<string, unknown>, code: null };
  } catch (error) {
    const info = ConnectError.from(error).findDetails(ErrorInfoSchema)[0];
    return { status: 0, transaction: null, code: info?.reason ?? String(error) };
  }
}

const CASES: MoveCase[] = [
  {
    name: "cancel",
    opens: "withdrawal",
    to: "canceled",
    events: [],
    run: (svc, id, key) => restMove(svc, `/v1/transactions/${id}/cancel`, key),
  },
  {
    name: "sandbox complete of a deposit",
    opens: "deposit",
    to: "completed",
    events: ["transaction.completed", "transaction.received"],
    run: (svc, id, key) => restMove(svc, `/v1/sandbox/transactions/${id}/complete`, key),
  },
  {
    name: "sandbox complete of a withdrawal",
    opens: "withdrawal",
    to: "completed",
    events: ["transaction.completed", "withdrawal.completed"],
    run: (svc, id, key) => restMove(svc, `/v1/sandbox/transactions/${id}/complete`, key),
  },
  {
    name: "sandbox fail of a withdrawal",
    opens: "withdrawal",
    to: "failed",
    events: ["withdrawal.failed"],
    run: (svc, id, key) => restMove(svc, `/v1/sandbox/transactions/${id}/fail`, key, { failure_code: "card_declined" }),
  },
  {
    name: "sandbox fail of a deposit",
    opens: "deposit",
    to: "failed",
    events: ["transaction.received"],
    run: (svc, id, key) => restMove(svc, `/v1/sandbox/transactions/${id}/fail`, key),
  },
  {
    name: "AdminService.SettleTransaction completed",
    opens: "deposit",
    to: "completed",
    events: ["transaction.completed", "transaction.received"],
    run: (svc, id, key) => settle(svc, id, key, "completed"),
  },
  {
    name: "AdminService.SettleTransaction failed",
    opens: "withdrawal",
    to: "failed",
    events: ["withdrawal.failed"],
    run: (svc, id, key) => settle(svc, id, key, "failed"),
  },
];

/** The contract's rule for a quiet wallet, from the user's transactions: the balance must equal it. */
async function expectLedgerRule(svc: TestService, userId: string): Promise<void> {
  const listed = await svc.request("GET", `/v1/users/${userId}/transactions?limit=100`);
  expect(listed.status).to.equal(200);
  const all = listed.body.data as { type: string; status: string; amount_usd: number; fee_usd: number }[];
  const cents = (usd: number) => Math.round(usd * 100);
  const sum = (type: string, statuses: string[], gross: boolean) =>
    all
      .filter((t) => t.type === type && statuses.includes(t.status))
      .reduce((s, t) => s + cents(t.amount_usd) + (gross ? cents(t.fee_usd) : -cents(t.fee_usd)), 0);
  const pendingOut = sum("withdrawal", ["pending", "processing"], true);
  const available = sum("deposit", ["completed"], false) - sum("withdrawal", ["completed"], true) - pendingOut;
  expect(await balanceOf(svc, userId)).to.deep.equal({
    available_usd: available / 100,
    pending_in_usd: sum("deposit", ["pending"], false) / 100,
    pending_out_usd: pendingOut / 100,
  });
}

describe("transaction moves with an Idempotency-Key, cut off and retried", function () {
  this.timeout(60_000);
  let svc: TestService;
  let serial = 0;

  // An API process alone: no ledger worker, so nothing but these calls moves a transaction.
  before(async () => {
    svc = await startTestService({ env: { SVC_ROLE: "api" } });
  });
  after(async () => {
    await svc.stop();
  });

  /** A user with 100 available (a deposit completed by hand) and a pending transaction of the case's type. */
  async function pendingTransaction(type: "deposit" | "withdrawal"): Promise<{ userId: string; id: string }> {
    const userId = await approvedUser(svc);
    const funding = await svc.request("POST", `/v1/sandbox/users/${userId}/deposits`, { body: { amount_usd: 100, complete_after_seconds: 3600 } });
    expect(funding.status, funding.text).to.equal(201);
    expect((await svc.request("POST", `/v1/sandbox/transactions/${funding.body.id}/complete`)).status).to.equal(200);
    const opened =
      type === "deposit"
        ? await svc.request("POST", `/v1/sandbox/users/${userId}/deposits`, { body: { amount_usd: 20, fee_usd: 0.5, complete_after_seconds: 3600 } })
        : await svc.request("POST", `/v1/users/${userId}/withdrawals`, { body: { amount_usd: 30 } });
    expect(opened.status, opened.text).to.equal(201);
    return { userId, id: opened.body.id as string };
  }

  const eventTypes = async (id: string) => (await eventsOf(svc, id)).map((e) => e.type).sort();

  for (const move of CASES) {
    describe(move.name, () => {
      it("cut off after its write: the retry answers the moved transaction as the first run did, effects once", async () => {
        const { userId, id } = await pendingTransaction(move.opens);
        const key = `move-cut-after-${serial++}`;
        const first = await move.run(svc, id, key);
        expect(first.status, JSON.stringify(first)).to.equal(200);
        const balance = await balanceOf(svc, userId);
        await cutOff(svc, key);
        const retried = await move.run(svc, id, key);
        expect(retried, "the retry answers what the first run answered").to.deep.equal(first);
        expect(retried.transaction!.status).to.equal(move.to);
        expect(await eventTypes(id)).to.deep.equal(move.events);
        expect(await balanceOf(svc, userId), "the move's balance change applied once").to.deep.equal(balance);
        await expectLedgerRule(svc, userId);
      });

      it("failed with a 5xx after its write: the retry answers the moved transaction, effects once", async () => {
        const { userId, id } = await pendingTransaction(move.opens);
        const key = `move-5xx-after-${serial++}`;
        failNextCall(svc.app.repositories.walletLedger, "transition", "after");
        const failed = await move.run(svc, id, key);
        expect(failed.status, JSON.stringify(failed)).to.not.equal(200);
        const retried = await move.run(svc, id, key);
        expect(retried.status, JSON.stringify(retried)).to.equal(200);
        expect(retried.transaction!.status).to.equal(move.to);
        expect(retried.transaction!.id).to.equal(id);
        await eventually(
          () => eventTypes(id),
          (types) => JSON.stringify(types) === JSON.stringify(move.events),
        );
        await expectLedgerRule(svc, userId);
        // The answer is now stored: a plain replay.
        expect(await move.run(svc, id, key)).to.deep.equal(retried);
      });

      it("cut off before its write: the retry applies the move", async () => {
        const { userId, id } = await pendingTransaction(move.opens);
        const key = `move-5xx-before-${serial++}`;
        failNextCall(svc.app.repositories.walletLedger, "transition", "before");
        const failed = await move.run(svc, id, key);
        expect(failed.status, JSON.stringify(failed)).to.not.equal(200);
        expect((await svc.request("GET", `/v1/transactions/${id}`)).body.status, "not moved by the failed run").to.equal("pending");
        const retried = await move.run(svc, id, key);
        expect(retried.status, JSON.stringify(retried)).to.equal(200);
        expect(retried.transaction!.status).to.equal(move.to);
        expect(await eventTypes(id)).to.deep.equal(move.events);
        await expectLedgerRule(svc, userId);
      });

      for (const other of ["another key", "no key"] as const) {
        it(`moved by ${other} while the run was cut off before its write: the retry is 409 invalid_state`, async () => {
          const { userId, id } = await pendingTransaction(move.opens);
          const key = `move-other-${serial++}`;
          failNextCall(svc.app.repositories.walletLedger, "transition", "before");
          expect((await move.run(svc, id, key)).status).to.not.equal(200);
          const elsewhere = await move.run(svc, id, other === "no key" ? null : `move-elsewhere-${serial++}`);
          expect(elsewhere.status, JSON.stringify(elsewhere)).to.equal(200);
          const retried = await move.run(svc, id, key);
          expect(retried.code, JSON.stringify(retried)).to.equal("invalid_state");
          expect(await eventTypes(id)).to.deep.equal(move.events);
          await expectLedgerRule(svc, userId);
        });
      }
    });
  }
});

describe("transaction moves with an Idempotency-Key against the simulator", function () {
  this.timeout(30_000);
  let svc: TestService;

  before(async () => {
    svc = await startTestService({ timings: { jobPollMs: 100 } });
  });
  after(async () => {
    await svc.stop();
  });

  it("a fail cut off before its write, retried after the simulator completed the deposit, is 409 invalid_state", async () => {
    const userId = await approvedUser(svc);
    const deposit = await svc.request("POST", `/v1/sandbox/users/${userId}/deposits`, { body: { amount_usd: 15, complete_after_seconds: 1 } });
    expect(deposit.status).to.equal(201);
    failNextCall(svc.app.repositories.walletLedger, "transition", "before");
    const failed = await svc.request("POST", `/v1/sandbox/transactions/${deposit.body.id}/fail`, {
      body: {},
      headers: { "idempotency-key": "sim-fail-1" },
    });
    expect(failed.status).to.equal(500);
    await eventually(
      () => svc.request("GET", `/v1/transactions/${deposit.body.id}`),
      (r) => r.body.status === "completed",
      8000,
    );
    const retried = await svc.request("POST", `/v1/sandbox/transactions/${deposit.body.id}/fail`, {
      body: {},
      headers: { "idempotency-key": "sim-fail-1" },
    });
    expect(retried.status, retried.text).to.equal(409);
    expect(retried.body.error.code).to.equal("invalid_state");
    expect(await balanceOf(svc, userId)).to.deep.equal({ available_usd: 15, pending_in_usd: 0, pending_out_usd: 0 });
  });
});
