// The wallet ledger: opens transactions, moves them through their states and applies each one's effect on the
// balance exactly once. Every change is one conditional write of the owner's user document (balance, the
// in-flight transaction's new state and its events together); the transactions collection is a projection
// written after it, finished by the sweep when a process stops in between. docs/contract.md, Money, states the
// invariant and why it holds. Which move may follow which state is domain/transaction-transitions.ts; the
// simulator's and the payout hand-off's steps are one job per transaction (transaction-step-job.ts).
import type { Clock } from "../domain/clock.ts";
import { describeError, svcError } from "../domain/errors.ts";
import type { MoveMark } from "../domain/reserved-ids.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";
import { checkMoveFrom, checkMoveType, isFinal, type SettlementMove, statusAfter } from "../domain/transaction-transitions.ts";
import type { EventRelay } from "../events/event-relay.ts";
import type { JobQueue } from "../jobs/job-queue.ts";
import { CHANGED, compareAndSet } from "../lib/compare-and-set.ts";
import type { TransactionRecord, TransactionRepository } from "../store/transaction-repository.ts";
import { inflightOf, ledgerOf, ownerOf, type UserWithLedger, type WalletLedgerRepository } from "../store/wallet-ledger.ts";
import { LedgerSweep } from "./ledger-sweep.ts";
import { LedgerWriter, type TransactionFailure } from "./ledger-writer.ts";
import type { PayoutPort } from "./payout-steps.ts";
import { type FinishOpening, TransactionOpening } from "./transaction-opening.ts";
import { TransactionSteps } from "./transaction-step-job.ts";

export interface LedgerDependencies {
  wallets: WalletLedgerRepository;
  transactions: TransactionRepository;
  relay: EventRelay;
  payouts: PayoutPort;
  /** Agenda: the steps' jobs and the sweep's. */
  jobs: JobQueue;
  /** Step runs one process runs at once (default: the queue's default concurrency). */
  stepConcurrency?: number;
  clock: Clock;
  /** Failures after the state is safely written (projection, relay, compaction): the sweeps and the steps finish them. */
  onBackgroundError: (error: unknown) => void;
}

export interface OpenOptions {
  /** When the simulator or the payout hand-off first acts on it; null when only settlement calls move it. */
  firstStepAt: Date | null;
  /** The id may have been used before (derived from an Idempotency-Key or a reference). */
  mayExist: boolean;
  /** Where the opening's follow-up goes (its projection and events' relay); awaited before answering by default. */
  finish?: FinishOpening;
}

export interface MoveOptions {
  /** The tenant the caller may see; null for internal callers (AdminService). */
  scope: TenantScope | null;
  /** Why it failed: kept by a move to failed. */
  failure?: TransactionFailure;
  /** The call's Idempotency-Key, as the stamp its move leaves on the transaction; absent or null without one. */
  mark?: MoveMark | null;
}

export class Ledger {
  private readonly writer: LedgerWriter;
  private readonly opening: TransactionOpening;
  private readonly steps: TransactionSteps;
  private readonly sweep: LedgerSweep;

  constructor(private readonly deps: LedgerDependencies) {
    this.writer = new LedgerWriter(deps);
    this.opening = new TransactionOpening({ ...deps, writer: this.writer });
    this.steps = new TransactionSteps({ ...deps, writer: this.writer });
    this.sweep = new LedgerSweep(deps);
  }

  /**
   * Schedules the ledger's sweep (roles all and worker): every `intervalMs`, in one process at a time, it finishes
   * what processes that stopped left for `staleAfterMs` (projections and compactions). The steps need nothing
   * started: their jobs run wherever Agenda runs.
   */
  start(intervalMs: number, staleAfterMs: number): Promise<void> {
    return this.sweep.start(intervalMs, staleAfterMs);
  }

  /**
   * Opens `record` on its user's wallet, or answers the transaction of that id if it was opened already (see
   * TransactionOpening.open for its checks). A transaction with a first step gets its step job first, before
   * anything is opened: a job whose transaction is not (yet) there does nothing, whereas a transaction without its
   * job would never move. A refusal removes it.
   */
  async open(scope: TenantScope, record: TransactionRecord, options: OpenOptions): Promise<TransactionRecord> {
    const step = options.firstStepAt ? this.steps.schedule(record, options.firstStepAt) : null;
    try {
      return await this.opening.open(step, scope, record, options.mayExist, options.finish ?? ((followUp) => followUp));
    } catch (error) {
      // Refused with nothing opened (a 4xx): the job has nothing to move. Anything else leaves it to its own runs.
      if (step && describeError(error).definition.status < 500 && !(await this.find(record.id).catch(() => record))) {
        await this.steps.cancel(record.id).catch(this.deps.onBackgroundError);
      }
      throw error;
    }
  }

  /**
   * Makes `move` on a transaction: 404 transaction_not_found when the caller cannot see it, 409 invalid_state when
   * the move is not one of its type or does not start from its status. Of two concurrent moves one wins; the other
   * sees the new status. A move with an Idempotency-Key stamps the transaction in the write that applies it; a
   * resumed run of the same request that finds its stamp on the transaction in the status it moves to answers it as
   * the first run would have (its events were written with the move), where any other mover's transaction is 409.
   */
  async move(id: string, move: SettlementMove, options: MoveOptions): Promise<TransactionRecord> {
    const read = () => this.deps.wallets.findHolder(id);
    return compareAndSet(`settling of transaction ${id}`, read, async (holder) => {
      const current = holder ? inflightOf(holder, id) : await this.deps.transactions.findById(id);
      if (!current || (options.scope && (current.project_id !== options.scope.projectId || current.livemode !== options.scope.livemode))) {
        throw svcError("transaction_not_found");
      }
      checkMoveType(current, move);
      const mark = options.mark ?? null;
      if (mark?.resumed && current.moved_by === mark.stamp && current.status === statusAfter(move)) {
        await this.finishResumed(holder, current);
        return current;
      }
      checkMoveFrom(current, move, holder !== null);
      const next = this.writer.moved(current, move, options.failure ?? null, mark?.stamp ?? null);
      // checkMoveFrom refuses a transaction not in flight (no holder).
      return (await this.writer.write(ownerOf(holder!), current, next)) ? next : CHANGED;
    });
  }

  /** The transaction of this id in any tenant (internal callers): its ledger state while in flight, else its projection. */
  async find(id: string): Promise<TransactionRecord | null> {
    return inflightOf(await this.deps.wallets.findHolder(id), id) ?? (await this.deps.transactions.findById(id));
  }

  /** The transaction as the caller may see it, or 404 transaction_not_found. */
  async get(scope: TenantScope, id: string): Promise<TransactionRecord> {
    const projected = await this.deps.transactions.find(scope, id);
    if (projected && isFinal(projected.status)) return projected;
    // Not final, or not projected yet: the ledger holds the latest state while the transaction is in flight.
    const holder = projected ? await this.deps.wallets.findById(projected.user_id) : await this.deps.wallets.findHolder(id);
    const inflight = inflightOf(holder, id);
    const latest = inflight && inflight.project_id === scope.projectId && inflight.livemode === scope.livemode ? inflight : projected;
    if (!latest) throw svcError("transaction_not_found");
    return latest;
  }

  /**
   * What a move found applied by an earlier run of its request may have left undone: the projection and
   * compaction while the transaction is still in flight, and the relay of its owner's outbox (the move's events).
   */
  private async finishResumed(holder: UserWithLedger | null, record: TransactionRecord): Promise<void> {
    if (holder) {
      const owner = { _id: holder._id, project_id: holder.project_id, livemode: holder.livemode, opens: ledgerOf(holder).opens };
      // The holder was read without its outbox (the steps never need it); this rare path reads it.
      const outbox = (await this.deps.wallets.findById(holder._id))?.outbox ?? [];
      await this.writer.afterWrite(owner, record, outbox);
      return;
    }
    const owner = await this.deps.wallets.findById(record.user_id).catch((error: unknown) => this.deps.onBackgroundError(error));
    if (owner && (owner.outbox ?? []).length > 0) await this.deps.relay.relayUserOutbox(owner).catch(this.deps.onBackgroundError);
  }
}
