// A transaction's moves, balance changes and events (src/domain/transaction-transitions.ts), as the contract's
// Money section states them, checked on every type, status and move.
import { expect } from "chai";
import { describeError } from "../../src/domain/errors.ts";
import { TRANSACTION_STATUSES, TRANSACTION_TYPES, type TransactionStatus, type TransactionType } from "../../src/domain/money.ts";
import {
  type BalanceDelta,
  checkMoveFrom,
  checkMoveType,
  isFinal,
  movingDelta,
  openingDelta,
  requiredCents,
  statusAfter,
  type TransactionMove,
  type TransactionState,
  transactionEventTypes,
} from "../../src/domain/transaction-transitions.ts";

const MOVES: TransactionMove[] = ["process", "hand_off", "complete", "fail", "cancel"];

const state = (type: TransactionType, status: TransactionStatus, amount_cents = 1000, fee_cents = 30): TransactionState => ({
  type,
  status,
  amount_cents,
  fee_cents,
});

/** The refusal a check throws, or null when it passes. */
function refusalOf(check: () => void): { code: string; status: number; message: string } | null {
  try {
    check();
    return null;
  } catch (error) {
    const described = describeError(error);
    return { code: described.code, status: described.definition.status, message: described.message };
  }
}

/** The balance after applying `deltas` to an empty wallet, every field present. */
function balanceAfter(...deltas: BalanceDelta[]): Required<BalanceDelta> {
  const balance = { available: 0, pending_in: 0, pending_out: 0 };
  for (const delta of deltas) {
    balance.available += delta.available ?? 0;
    balance.pending_in += delta.pending_in ?? 0;
    balance.pending_out += delta.pending_out ?? 0;
  }
  return balance;
}

describe("transaction transitions", () => {
  describe("which move may follow which state", () => {
    // type -> status -> the moves allowed from it while in flight.
    const allowed: Record<TransactionType, Record<TransactionStatus, TransactionMove[]>> = {
      deposit: { pending: ["complete", "fail"], processing: ["complete", "fail"], completed: [], failed: [], canceled: [] },
      withdrawal: {
        pending: ["process", "complete", "fail", "cancel"],
        processing: ["hand_off", "complete", "fail"],
        completed: [],
        failed: [],
        canceled: [],
      },
    };

    it("allows exactly the table's moves for every type and status, and refuses the others with 409 invalid_state", () => {
      for (const type of TRANSACTION_TYPES) {
        for (const status of TRANSACTION_STATUSES) {
          for (const move of MOVES) {
            const transaction = state(type, status);
            const refusal = refusalOf(() => {
              checkMoveType(transaction, move);
              checkMoveFrom(transaction, move, true);
            });
            const expected = allowed[type][status].includes(move);
            expect(refusal === null, `${move} of a ${status} ${type}`).to.equal(expected);
            if (refusal) expect([refusal.code, refusal.status]).to.deep.equal(["invalid_state", 409]);
          }
        }
      }
    });

    it("leads each move to its status", () => {
      expect(MOVES.map(statusAfter)).to.deep.equal(["processing", "processing", "completed", "failed", "canceled"]);
    });

    it("refuses a move of the other type before looking at the status, saying which type may make it", () => {
      for (const status of TRANSACTION_STATUSES) {
        expect(refusalOf(() => checkMoveType(state("deposit", status), "cancel"))?.message).to.equal(
          "Only a pending withdrawal can be canceled; this is a deposit.",
        );
      }
      expect(refusalOf(() => checkMoveType(state("withdrawal", "completed"), "cancel"))).to.equal(null);
    });

    it("refuses every move of a transaction the ledger no longer holds, naming the status read", () => {
      for (const move of MOVES) {
        expect(refusalOf(() => checkMoveFrom(state("withdrawal", "pending"), move, false))).to.deep.equal({
          code: "invalid_state",
          status: 409,
          message: "The transaction is pending.",
        });
      }
    });

    it("calls completed, failed and canceled final, and nothing else", () => {
      expect(TRANSACTION_STATUSES.filter(isFinal)).to.deep.equal(["completed", "failed", "canceled"]);
    });
  });

  describe("balance changes", () => {
    it("holds a deposit's net amount in pending_in and a withdrawal's gross amount in pending_out while in flight", () => {
      expect(balanceAfter(openingDelta(state("deposit", "pending")))).to.deep.equal({ available: 0, pending_in: 970, pending_out: 0 });
      expect(balanceAfter(openingDelta(state("withdrawal", "pending")))).to.deep.equal({ available: -1030, pending_in: 0, pending_out: 1030 });
    });

    it("needs a withdrawal's amount and fee of the available balance to open it, a deposit nothing", () => {
      expect(requiredCents(state("withdrawal", "pending"))).to.equal(1030);
      expect(requiredCents(state("deposit", "pending"))).to.equal(0);
    });

    it("settles each transaction's effect once: completed credits or debits it, failed and canceled undo its hold", () => {
      const settled = (type: TransactionType, from: TransactionStatus, to: TransactionStatus) =>
        balanceAfter(openingDelta(state(type, "pending")), movingDelta(state(type, from), to));
      expect(settled("deposit", "pending", "completed")).to.deep.equal({ available: 970, pending_in: 0, pending_out: 0 });
      expect(settled("deposit", "pending", "failed")).to.deep.equal({ available: 0, pending_in: 0, pending_out: 0 });
      for (const from of ["pending", "processing"] as const) {
        expect(settled("withdrawal", from, "completed")).to.deep.equal({ available: -1030, pending_in: 0, pending_out: 0 });
        expect(settled("withdrawal", from, "failed")).to.deep.equal({ available: 0, pending_in: 0, pending_out: 0 });
      }
      expect(settled("withdrawal", "pending", "canceled")).to.deep.equal({ available: 0, pending_in: 0, pending_out: 0 });
    });

    it("changes nothing on a move that is not final, or from a status that already is", () => {
      expect(movingDelta(state("withdrawal", "pending"), "processing")).to.deep.equal({});
      expect(movingDelta(state("withdrawal", "processing"), "processing")).to.deep.equal({});
      for (const type of TRANSACTION_TYPES) expect(movingDelta(state(type, "completed"), "failed")).to.deep.equal({});
    });
  });

  describe("events", () => {
    const eventsOfMove = (type: TransactionType, from: TransactionStatus, to: TransactionStatus) =>
      transactionEventTypes(state(type, from), state(type, to));

    it("emits transaction.received for an opened deposit and nothing for an opened withdrawal", () => {
      expect(transactionEventTypes(null, state("deposit", "pending"))).to.deep.equal(["transaction.received"]);
      expect(transactionEventTypes(null, state("withdrawal", "pending"))).to.deep.equal([]);
    });

    it("emits the contract's events for each settlement and none for the other moves", () => {
      expect(eventsOfMove("deposit", "pending", "completed")).to.deep.equal(["transaction.completed"]);
      expect(eventsOfMove("deposit", "pending", "failed")).to.deep.equal([]);
      expect(eventsOfMove("withdrawal", "processing", "completed")).to.deep.equal(["transaction.completed", "withdrawal.completed"]);
      expect(eventsOfMove("withdrawal", "processing", "failed")).to.deep.equal(["withdrawal.failed"]);
      expect(eventsOfMove("withdrawal", "pending", "canceled")).to.deep.equal([]);
      expect(eventsOfMove("withdrawal", "pending", "processing")).to.deep.equal([]);
      expect(eventsOfMove("withdrawal", "processing", "processing")).to.deep.equal([]);
    });
  });
});
