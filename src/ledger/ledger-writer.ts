// The ledger's write of a transaction's move, and what follows every ledger write (opening included): the
// `transactions` projection and the relay of its events, then the compaction of a settled transaction, which also
// removes its events from the outbox. The move's balance change, the new state and its events are one conditional
// write of the wallet owner's document.
import type { Clock } from "../domain/clock.ts";
import { isFinal, movingDelta, statusAfter, transactionEventTypes, type TransactionMove } from "../domain/transaction-transitions.ts";
import { transactionEvents } from "../events/event-factory.ts";
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

  /**
   * One conditional write from `current` to `next`, on the wallet of `owner` as read with `current` (its `opens`
   * fences the compaction); false when `current` is no longer the ledger's state.
   */
  async write(owner: LedgerOwner, current: TransactionRecord, next: TransactionRecord): Promise<boolean> {
    const events = transactionEvents(transactionEventTypes(current, next), next, next.updated_at);
    if (!(await this.deps.wallets.transition(current.user_id, current, next, movingDelta(current, next.status), events))) return false;
    await this.afterWrite(owner, next, events, current);
    return true;
  }

  /**
   * After a write: the projection and the events' relay, together; for a settled transaction then its compaction,
   * which also removes its events from the outbox (the relay leaves them there for it: one write of the owner for
   * both). A failure here loses nothing: the sweepers (ledger and relay) finish it. `from`: "new" when the write
   * opened `record`, the record it moved from when it moved it (see TransactionRepository.project).
   */
  async afterWrite(
    owner: LedgerOwner,
    record: TransactionRecord,
    events: OutboxEvent[],
    from: TransactionRecord | "new" | null = null,
  ): Promise<void> {
    const settled = isFinal(record.status);
    const succeeded = (work: Promise<void>) =>
      work.then(
        () => true,
        (error: unknown) => {
          this.deps.onBackgroundError(error);
          return false;
        },
      );
    const withEvents = { ...owner, outbox: events };
    const [projected, logged] = await Promise.all([
      succeeded(this.deps.transactions.project(record, from)),
      events.length === 0 || succeeded(settled ? this.deps.relay.logUserOutbox(withEvents) : this.deps.relay.relayUserOutbox(withEvents)),
    ]);
    if (!settled || !projected) return;
    const loggedIds = logged ? events.map((event) => event.id) : [];
    await this.deps.wallets.compact(owner._id, [record.id], owner.opens, loggedIds).catch(this.deps.onBackgroundError);
  }
}
