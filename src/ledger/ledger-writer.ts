// The ledger's write of a transaction's move, and what follows every ledger write (opening included): the
// `transactions` projection, the compaction of a settled transaction and the relay of its events. The move's
// balance change, the new state and its events are one conditional write of the wallet owner's document.
import type { Clock } from "../domain/clock.ts";
import { isFinal, movingDelta, statusAfter, transactionEventTypes, type TransactionMove } from "../domain/transaction-transitions.ts";
import { transactionEvent } from "../events/event-factory.ts";
import type { EventRelay } from "../events/event-relay.ts";
import type { OutboxEvent } from "../store/outbox.ts";
import type { TransactionRecord, TransactionRepository } from "../store/transaction-repository.ts";
import type { LedgerOwner, WalletLedgerRepository } from "../store/wallet-ledger.ts";

export interface LedgerWriterDependencies {
  wallets: WalletLedgerRepository;
  transactions: TransactionRepository;
  relay: EventRelay;
  clock: Clock;
  /** Failures after the state is safely written (projection, relay, compaction): the sweepers and the steps finish them. */
  onBackgroundError: (error: unknown) => void;
}

/** Why a transaction failed, as its `failure_code` and `failure_message` say. */
export interface TransactionFailure {
  code: string;
  message: string;
}

export class LedgerWriter {
  constructor(private readonly deps: LedgerWriterDependencies) {}

  /**
   * The record after `move`: its new status, its failure (kept only by a move to failed), one version more, and
   * the stamp of the Idempotency-Key whose call made it (null for the steps and calls without a key).
   */
  moved(
    current: TransactionRecord,
    move: TransactionMove,
    failure: TransactionFailure | null = null,
    movedBy: string | null = null,
  ): TransactionRecord {
    const to = statusAfter(move);
    return {
      ...current,
      status: to,
      failure_code: to === "failed" ? (failure?.code ?? null) : null,
      failure_message: to === "failed" ? (failure?.message ?? null) : null,
      updated_at: this.deps.clock(),
      version: current.version + 1,
      moved_by: movedBy,
    };
  }

  /** One conditional write from `current` to `next`; false when `current` is no longer the ledger's state. */
  async write(current: TransactionRecord, next: TransactionRecord): Promise<boolean> {
    const events = transactionEventTypes(current, next).map((type) => transactionEvent(type, next, next.updated_at));
    const owner = await this.deps.wallets.transition(current.user_id, current, next, movingDelta(current, next.status), events);
    if (!owner) return false;
    await this.afterWrite(owner, next, events);
    return true;
  }

  /**
   * After a write: the projection, the events' relay and the compaction of a settled transaction. A failure here
   * loses nothing: the sweepers (ledger and relay) finish it. `opened`: the write opened `record`.
   */
  async afterWrite(owner: LedgerOwner, record: TransactionRecord, events: OutboxEvent[], opened = false): Promise<void> {
    try {
      await this.deps.transactions.project(record, opened);
      if (isFinal(record.status)) await this.deps.wallets.compact(owner._id, [record.id], owner.opens);
    } catch (error) {
      this.deps.onBackgroundError(error);
    }
    if (events.length > 0) await this.deps.relay.relayUserOutbox({ ...owner, outbox: events }).catch(this.deps.onBackgroundError);
  }
}
