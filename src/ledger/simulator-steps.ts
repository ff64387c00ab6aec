// The sandbox simulator's steps: a simulated deposit completes `complete_after_seconds` after its creation; a
// simulated withdrawal is processing 1 s after its creation and settled at 2 s, failed when its amount is the
// sandbox's failing one. Each step is one conditional write on the transaction's state as read.
import type { Clock } from "../domain/clock.ts";
import {
  SANDBOX_FAILING_WITHDRAWAL_CENTS,
  SANDBOX_WITHDRAWAL_FAILURE_CODE,
  SANDBOX_WITHDRAWAL_PROCESSING_MS,
  SANDBOX_WITHDRAWAL_SETTLE_MS,
} from "../domain/money.ts";
import { isFinal } from "../domain/transaction-transitions.ts";
import type { TransactionRecord } from "../store/transaction-repository.ts";
import type { LedgerOwner } from "../store/wallet-ledger.ts";
import type { LedgerWriter } from "./ledger-writer.ts";

/** When a simulated transaction's next step is due; null when none is. `completeAfterMs`: a deposit's delay. */
export function simulatorStepDueAt(record: TransactionRecord, completeAfterMs: number): Date | null {
  if (isFinal(record.status)) return null;
  const created = record.created_at.getTime();
  if (record.type === "deposit") return record.status === "pending" ? new Date(created + completeAfterMs) : null;
  return new Date(created + (record.status === "pending" ? SANDBOX_WITHDRAWAL_PROCESSING_MS : SANDBOX_WITHDRAWAL_SETTLE_MS));
}

export class SimulatorSteps {
  constructor(private readonly deps: { writer: LedgerWriter; clock: Clock }) {}

  /**
   * Takes `record`, as just read with its `owner`, one step on, and answers when its next step is due: none once
   * settled, now when the record moved on meanwhile (settled, canceled, stepped by another process; the next run
   * reads it again).
   */
  async take(owner: LedgerOwner, record: TransactionRecord, completeAfterMs: number): Promise<Date | undefined> {
    const next = this.nextOf(record);
    return (await this.deps.writer.write(owner, record, next)) ? (simulatorStepDueAt(next, completeAfterMs) ?? undefined) : this.deps.clock();
  }

  private nextOf(record: TransactionRecord): TransactionRecord {
    const { writer } = this.deps;
    if (record.type === "deposit") return writer.moved(record, "complete");
    if (record.status === "pending") return writer.moved(record, "process");
    if (record.amount_cents === SANDBOX_FAILING_WITHDRAWAL_CENTS) {
      return writer.moved(record, "fail", { code: SANDBOX_WITHDRAWAL_FAILURE_CODE, message: "The destination rejected the payout." });
    }
    return writer.moved(record, "complete");
  }
}
