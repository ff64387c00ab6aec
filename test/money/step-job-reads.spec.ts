// A transaction's step job reads its wallet (the holder of transactions in flight), then, finding none, its
// projection: a run whose two reads straddle the opening finds no holder and a projection still in flight. That
// transaction is there to move: the job must look again, not end (which would leave a deposit pending for ever).
import { expect } from "chai";
import type { TransactionStatus } from "../../src/domain/money.ts";
import { TRANSACTION_STEP_JOB, TransactionSteps, type TransactionStepsDependencies } from "../../src/ledger/transaction-step-job.ts";

const NOW = new Date("2026-11-28T04:00:00.000Z");

/** The step job's handler over a wallet store that holds nothing and a projection of `status` (or none). */
function stepRun(status: TransactionStatus | null): (job: object) => Promise<Date | undefined> {
  let handler: ((job: object) => Promise<Date | undefined>) | undefined;
  const deps = {
    wallets: { findHolder: async () => null },
    transactions: { findById: async (id: string) => (status === null ? null : { id, status }) },
    writer: {},
    payouts: {},
    jobs: {
      define: (name: string, run: (job: object) => Promise<Date | undefined>) => {
        if (name === TRANSACTION_STEP_JOB) handler = run;
      },
    },
    clock: () => NOW,
    onBackgroundError: (error: unknown) => {
      throw error;
    },
  } as unknown as TransactionStepsDependencies;
  new TransactionSteps(deps);
  return handler!;
}

describe("a transaction's step job when its wallet holds no such transaction", () => {
  const job = (openedMsAgo: number) => ({ transactionId: "txn_x", openedAt: new Date(NOW.getTime() - openedMsAgo), completeAfterMs: 0 });

  it("looks again soon when the projection is still in flight (opened between its two reads)", async () => {
    for (const status of ["pending", "processing"] as const) {
      const next = await stepRun(status)(job(30));
      expect(next?.getTime(), status).to.equal(NOW.getTime() + 100);
    }
    // Also long after the opening: a projection in flight is a transaction to move, whatever its age.
    expect((await stepRun("pending")(job(600_000)))?.getTime()).to.equal(NOW.getTime() + 10_000);
  });

  it("ends when the projection is final (settled and compacted)", async () => {
    for (const status of ["completed", "failed", "canceled"] as const) expect(await stepRun(status)(job(30)), status).to.equal(undefined);
  });

  it("looks again while no projection exists within the opening window, and ends after it", async () => {
    expect((await stepRun(null)(job(2_000)))?.getTime()).to.equal(NOW.getTime() + 2_000);
    expect(await stepRun(null)(job(121_000))).to.equal(undefined);
  });
});
