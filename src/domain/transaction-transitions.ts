// A transaction's states (docs/contract.md, Money, States and events): which move may follow which state, what
// opening and each move do to the wallet's balance, and which events they emit. Pure: the ledger writes a move,
// its balance change and its events in one conditional write of the wallet owner's document.
import { svcError } from "./errors.ts";
import type { EventType } from "./event-types.ts";
import { FINAL_STATUSES, type TransactionStatus, type TransactionType } from "./money.ts";

/** What these rules read of a transaction. */
export interface TransactionState {
  type: TransactionType;
  status: TransactionStatus;
  amount_cents: number;
  fee_cents: number;
}

/**
 * The moves of a transaction after its opening: the steps' (`process`, `hand_off`, and the simulator's `complete`
 * and `fail`) and the settlement calls' (`complete`, `fail`, `cancel`).
 */
export type TransactionMove = "process" | "hand_off" | "complete" | "fail" | "cancel";
/** The moves a call may ask for. */
export type SettlementMove = Extract<TransactionMove, "complete" | "fail" | "cancel">;

interface MoveRule {
  from: readonly TransactionStatus[];
  to: TransactionStatus;
  /** The one type that may make the move; null for both. */
  onlyType: TransactionType | null;
  /** The move in a refusal's words: "Only a pending withdrawal can be canceled". */
  done: string;
}

const MOVES: Record<TransactionMove, MoveRule> = {
  // Handed to the payout: a withdrawal can no longer be canceled.
  process: { from: ["pending"], to: "processing", onlyType: "withdrawal", done: "processed" },
  // The custodian took a live withdrawal: the status stays, the hand-off is not tried again.
  hand_off: { from: ["processing"], to: "processing", onlyType: "withdrawal", done: "handed off" },
  complete: { from: ["pending", "processing"], to: "completed", onlyType: null, done: "completed" },
  fail: { from: ["pending", "processing"], to: "failed", onlyType: null, done: "failed" },
  cancel: { from: ["pending"], to: "canceled", onlyType: "withdrawal", done: "canceled" },
};

/** The status a move leads to. */
export function statusAfter(move: TransactionMove): TransactionStatus {
  return MOVES[move].to;
}

/** 409 invalid_state when `move` is not one of this transaction's type (checked before its status). */
export function checkMoveType(transaction: TransactionState, move: TransactionMove): void {
  const { from, onlyType, done } = MOVES[move];
  if (onlyType !== null && transaction.type !== onlyType) {
    throw svcError("invalid_state", `Only a ${from.join(" or ")} ${onlyType} can be ${done}; this is a ${transaction.type}.`);
  }
}

/**
 * 409 invalid_state unless `transaction` may make `move` now: its status is one the move starts from and it is
 * still in flight (one the ledger no longer holds is settled, whatever an older read of it says).
 */
export function checkMoveFrom(transaction: TransactionState, move: TransactionMove, inFlight: boolean): void {
  if (!inFlight || !MOVES[move].from.includes(transaction.status)) throw svcError("invalid_state", `The transaction is ${transaction.status}.`);
}

export function isFinal(status: TransactionStatus): boolean {
  return FINAL_STATUSES.includes(status);
}

/** What a balance change adds to each of the wallet's balances, in cents. */
export interface BalanceDelta {
  available?: number;
  pending_in?: number;
  pending_out?: number;
}

/** What a transaction holds on the balance while in flight: a deposit its net amount, a withdrawal its gross. */
function heldCents(transaction: TransactionState): number {
  return transaction.type === "deposit" ? transaction.amount_cents - transaction.fee_cents : transaction.amount_cents + transaction.fee_cents;
}

/** The balance change of opening a transaction. */
export function openingDelta(transaction: TransactionState): BalanceDelta {
  const held = heldCents(transaction);
  return transaction.type === "deposit" ? { pending_in: held } : { available: -held, pending_out: held };
}

/** What opening a transaction needs of the available balance: a withdrawal its amount and fee, a deposit nothing. */
export function requiredCents(transaction: TransactionState): number {
  return transaction.type === "withdrawal" ? heldCents(transaction) : 0;
}

/** The balance change of moving a transaction to `to` (only the move to a final status changes it). */
export function movingDelta(transaction: TransactionState, to: TransactionStatus): BalanceDelta {
  if (!isFinal(to) || isFinal(transaction.status)) return {};
  const held = heldCents(transaction);
  if (transaction.type === "deposit") return to === "completed" ? { pending_in: -held, available: held } : { pending_in: -held };
  return to === "completed" ? { pending_out: -held } : { pending_out: -held, available: held };
}

/** The event types the ledger alone emits. */
export type TransactionEventType = Extract<EventType, `transaction.${string}` | `withdrawal.${string}`>;

/** The events of a transaction's new state: `before` null for its opening. */
export function transactionEventTypes(before: TransactionState | null, after: TransactionState): TransactionEventType[] {
  if (before === null) return after.type === "deposit" ? ["transaction.received"] : [];
  if (before.status === after.status) return [];
  if (after.status === "completed") return after.type === "deposit" ? ["transaction.completed"] : ["transaction.completed", "withdrawal.completed"];
  if (after.status === "failed" && after.type === "withdrawal") return ["withdrawal.failed"];
  return [];
}
