// The wallet ledger: opens transactions, moves them through their states and applies each one's effect on the
// balance exactly once. Every change is one conditional write of the owner's user document (balance, the
// in-flight transaction's new state and its events together); the transactions collection is a projection
// written after it, finished by the sweeper when a process stops in between. docs/contract.md, Money, states
// the invariant and why it holds. The simulator's and the payout hand-off's steps are Agenda jobs, one per
// transaction (`transaction-step`), written before the transaction they move; each run does what the
// transaction's state calls for, if anything, and answers when to look again.
import type { Clock } from "../domain/clock.ts";
import { describeError, svcError } from "../domain/errors.ts";
import type { MoveMark } from "../domain/reserved-ids.ts";
import {
  FINAL_STATUSES,
  SANDBOX_FAILING_WITHDRAWAL_CENTS,
  SANDBOX_WITHDRAWAL_FAILURE_CODE,
  SANDBOX_WITHDRAWAL_PROCESSING_MS,
  SANDBOX_WITHDRAWAL_SETTLE_MS,
  type TransactionStatus,
} from "../domain/money.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";
import { transactionEvent, type MoneyEventType } from "../events/event-factory.ts";
import type { EventRelay } from "../events/event-relay.ts";
import type { JobQueue } from "../jobs/job-queue.ts";
import { CHANGED, compareAndSet } from "../lib/compare-and-set.ts";
import { TtlCache } from "../lib/ttl-cache.ts";
import type { OutboxEvent } from "../store/outbox.ts";
import type { TransactionRecord, TransactionRepository } from "../store/transaction-repository.ts";
import { ledgerOf, type BalanceDelta, type LedgerOwner, type UserWithLedger, type WalletLedgerRepository } from "../store/wallet-ledger.ts";

/** How long a live withdrawal waits before its hand-off to the custodian is tried again. */
const PAYOUT_RETRY_MS = 30_000;
/**
 * A user's first wallet never changes once made, so its id is remembered for this long: a new transaction is
 * then opened with one conditional write and no read (the write checks the id, so a stale entry costs a read).
 */
const WALLET_ID_TTL_MS = 10 * 60_000;
const WALLET_ID_ENTRIES = 100_000;
/** The job of a transaction's steps: one per transaction, unique by its id. */
export const TRANSACTION_STEP_JOB = "transaction-step";
/** The recurring job of the ledger's sweep. */
const LEDGER_SWEEP_JOB = "ledger-sweep";
/** A step that failed unexpectedly (the database, a bug) is looked at again after this. */
const STEP_ERROR_RETRY_MS = 5000;
/**
 * A step's job is written before the opening of its transaction, so a run may find no transaction yet: it looks
 * again (after about the time since the opening, 100 ms to 10 s) for this long after the opening started, and then
 * ends (the opening was refused or its process died; a retry of the same request writes the job again).
 */
const OPENING_WINDOW_MS = 120_000;

interface TransactionStepJob {
  transactionId: string;
  /** When the opening started (its `created_at`). */
  openedAt: Date;
  /** A simulated deposit's delay before completion (complete_after_seconds), in ms; 0 for the others. */
  completeAfterMs: number;
}

/** When the step that `record`'s state calls for is due; null when none is (settled, or moved by settlement calls only). */
function stepDueAt(record: TransactionRecord, completeAfterMs: number): Date | null {
  if (isFinal(record.status)) return null;
  const created = record.created_at.getTime();
  if (record.type === "deposit") return record.simulated && record.status === "pending" ? new Date(created + completeAfterMs) : null;
  if (record.simulated) return new Date(created + (record.status === "pending" ? SANDBOX_WITHDRAWAL_PROCESSING_MS : SANDBOX_WITHDRAWAL_SETTLE_MS));
  // Live: the hand-off at once, and again (it is idempotent) until the custodian took it.
  return record.status === "processing" && record.handed_off ? null : record.created_at;
}

/** Where live withdrawals are paid out: the custodian (WalletCustodian.payOut). Idempotent per transaction id. */
export interface PayoutPort {
  payOut(
    request: { transactionId: string; userId: string; walletId: string; amountCents: number; fiatCurrency: string },
    signal: AbortSignal,
  ): Promise<void>;
}

export interface LedgerDependencies {
  wallets: WalletLedgerRepository;
  transactions: TransactionRepository;
  relay: EventRelay;
  payouts: PayoutPort;
  /** Agenda: the steps' jobs and the sweep's. */
  jobs: JobQueue;
  clock: Clock;
  /** Failures after the state is safely written (projection, relay, compaction): the sweepers and the steps finish them. */
  onBackgroundError: (error: unknown) => void;
}

export interface OpenOptions {
  /** When the simulator or the payout hand-off first acts on it; null when only settlement calls move it. */
  firstStepAt: Date | null;
  /** The id may have been used before (derived from an Idempotency-Key or a reference). */
  mayExist: boolean;
  /** Where the opening's follow-up goes (its projection and events' relay); awaited before answering by default. It never rejects. */
  finish?: (followUp: Promise<void>) => Promise<void>;
}

export type Outcome = "processing" | "completed" | "failed" | "canceled";

export interface MoveOptions {
  /** The tenant the caller may see; null for internal callers (AdminService, jobs). */
  scope: TenantScope | null;
  /** Statuses the move is allowed from; any other is 409 invalid_state. */
  from: readonly TransactionStatus[];
  failureCode?: string;
  failureMessage?: string;
  /** Only deposits, or only withdrawals, may be moved (cancel: withdrawals). */
  onlyType?: TransactionRecord["type"];
  /** The call's Idempotency-Key, as the stamp its move leaves on the transaction; absent or null without one. */
  mark?: MoveMark | null;
}

const isFinal = (status: TransactionStatus) => FINAL_STATUSES.includes(status);

/** What a transaction holds on the balance while in flight: a deposit its net amount, a withdrawal its gross. */
function heldCents(record: TransactionRecord): number {
  return record.type === "deposit" ? record.amount_cents - record.fee_cents : record.amount_cents + record.fee_cents;
}

/** The balance change of opening a transaction. */
function openingDelta(record: TransactionRecord): BalanceDelta {
  const held = heldCents(record);
  return record.type === "deposit" ? { pending_in: held } : { available: -held, pending_out: held };
}

/** What opening `record` needs of the available balance: a withdrawal its amount and fee, a deposit nothing. */
function requiredCents(record: TransactionRecord): number {
  return record.type === "withdrawal" ? heldCents(record) : 0;
}

/** The opening write of `record`: its balance change, the funds it needs and its events. */
function openingWriteOf(record: TransactionRecord) {
  const events = eventTypesOf(null, record).map((type) => transactionEvent(type, record, record.created_at));
  return { delta: openingDelta(record), requireAvailable: requiredCents(record), events };
}

/** The balance change of moving a transaction from one status to another (only the final move changes it). */
function movingDelta(record: TransactionRecord, to: TransactionStatus): BalanceDelta {
  if (!isFinal(to) || isFinal(record.status)) return {};
  const held = heldCents(record);
  if (record.type === "deposit") return to === "completed" ? { pending_in: -held, available: held } : { pending_in: -held };
  return to === "completed" ? { pending_out: -held } : { pending_out: -held, available: held };
}

/** The events a transaction's new state emits (docs/contract.md, Money, Events). */
function eventTypesOf(before: TransactionRecord | null, after: TransactionRecord): MoneyEventType[] {
  if (before === null) return after.type === "deposit" ? ["transaction.received"] : [];
  if (before.status === after.status) return [];
  if (after.status === "completed") return after.type === "deposit" ? ["transaction.completed"] : ["transaction.completed", "withdrawal.completed"];
  if (after.status === "failed" && after.type === "withdrawal") return ["withdrawal.failed"];
  return [];
}

export class Ledger {
  private readonly walletIds = new TtlCache<string, string>(WALLET_ID_TTL_MS, WALLET_ID_ENTRIES);

  constructor(private readonly deps: LedgerDependencies) {
    deps.jobs.define<TransactionStepJob>(TRANSACTION_STEP_JOB, (job) => this.runStep(job));
  }

  /**
   * Schedules the ledger's sweep (roles all and worker): every `intervalMs`, in one process at a time, it finishes
   * what processes that stopped left for `staleAfterMs` (projections and compactions). The steps need nothing
   * started: their jobs run wherever Agenda runs.
   */
  async start(intervalMs: number, staleAfterMs: number): Promise<void> {
    await this.deps.jobs.every(LEDGER_SWEEP_JOB, intervalMs, () => this.sweep(staleAfterMs));
  }

  /**
   * Opens `record` on its user's wallet, or answers the transaction of that id if it was opened already (a
   * retry after a crash, a repeated deposit reference). Checks, in order: 404 user_not_found, 409
   * user_suspended, kyc_required, wallet_not_ready, insufficient_funds (withdrawals: available < amount + fee).
   * A transaction with a first step gets its step job first, before anything is opened: a job whose transaction is
   * not (yet) there does nothing, whereas a transaction without its job would never move. A refusal removes it.
   */
  async open(scope: TenantScope, record: TransactionRecord, options: OpenOptions): Promise<TransactionRecord> {
    const step = options.firstStepAt ? this.scheduleFirstStep(record, options.firstStepAt) : null;
    try {
      return await this.openAfter(step, scope, record, options.mayExist, options.finish ?? ((followUp) => followUp));
    } catch (error) {
      // Refused with nothing opened (a 4xx): the job has nothing to move. Anything else leaves it to its own runs.
      if (step && describeError(error).definition.status < 500 && !(await this.find(record.id).catch(() => record))) {
        await this.deps.jobs.cancel(TRANSACTION_STEP_JOB, { transactionId: record.id }).catch(this.deps.onBackgroundError);
      }
      throw error;
    }
  }

  /** The step job of a transaction about to be opened (left as it is when a run of the same request wrote it already). */
  private scheduleFirstStep(record: TransactionRecord, at: Date): Promise<void> {
    const job: TransactionStepJob = {
      transactionId: record.id,
      openedAt: record.created_at,
      completeAfterMs: record.type === "deposit" ? at.getTime() - record.created_at.getTime() : 0,
    };
    return this.deps.jobs.insertUnique(TRANSACTION_STEP_JOB, job, at, "transactionId");
  }

  /** open, once `step` (the step job's write, if any) is done: reads may go along with it, writes only after. */
  private async openAfter(
    step: Promise<void> | null,
    scope: TenantScope,
    record: TransactionRecord,
    mayExist: boolean,
    finish: (followUp: Promise<void>) => Promise<void>,
  ): Promise<TransactionRecord> {
    const walletKey = `${scope.projectId}:${scope.livemode}:${record.user_id}`;
    const knownWallet = mayExist ? undefined : this.walletIds.get(walletKey, Date.now());
    if (knownWallet !== undefined) {
      await step;
      // A new id on a wallet seen before: the conditional write checks everything; a refusal is explained below.
      const opened = await this.tryOpenNew(scope, { ...record, wallet_id: knownWallet }, finish);
      if (opened) return opened;
    }
    const read = async () => (await Promise.all([this.deps.wallets.findForOpening(scope, record.user_id, record.id), step]))[0];
    return compareAndSet(`opening of transaction ${record.id}`, read, async (user, attempt) => {
      if (!user) throw svcError("user_not_found");
      const ledger = ledgerOf(user);
      const inflight = ledger.inflight.find((r) => r.id === record.id);
      if (inflight) {
        await this.deps.transactions.project(inflight);
        return inflight;
      }
      // Read after the user: a transaction of this id opened later than `ledger.opens` was read is fenced below.
      if (mayExist || attempt > 0) {
        const existing = await this.deps.transactions.findById(record.id);
        if (existing) return existing;
      }
      if (user.suspended) throw svcError("user_suspended");
      if (user.kyc_status !== "approved") throw svcError("kyc_required");
      if (user.wallet_status !== "ready" || user.wallets.length === 0) throw svcError("wallet_not_ready");
      const walletId = user.wallets[0]!.id;
      this.walletIds.set(walletKey, walletId, Date.now());
      const opening: TransactionRecord = { ...record, wallet_id: walletId };
      if (ledger.available_cents < requiredCents(opening)) throw svcError("insufficient_funds");
      // Null when something changed in between (a concurrent transaction, a suspension, a compaction).
      return (await this.tryOpen(scope, opening, mayExist || attempt > 0 ? ledger.opens : null, finish)) ?? CHANGED;
    });
  }

  /** One conditional opening write (see WalletLedgerRepository.open); null when a condition failed. */
  private async tryOpen(
    scope: TenantScope,
    opening: TransactionRecord,
    seenOpens: number | null,
    finish: (followUp: Promise<void>) => Promise<void>,
  ): Promise<TransactionRecord | null> {
    const write = openingWriteOf(opening);
    const owner = await this.deps.wallets.open(scope, opening, { ...write, seenOpens });
    if (!owner) return null;
    await finish(this.afterWrite(owner, opening, write.events));
    return opening;
  }

  /**
   * The opening of a new id, sent with the openings of concurrent requests in one command; null when it did not
   * apply. When some opening of the batch did not, this one is looked up: only its opener knows a new id, and
   * nothing settles it before its opener has answered, so it is in flight if it was opened.
   */
  private async tryOpenNew(
    scope: TenantScope,
    opening: TransactionRecord,
    finish: (followUp: Promise<void>) => Promise<void>,
  ): Promise<TransactionRecord | null> {
    const write = openingWriteOf(opening);
    const outcome = await this.deps.wallets.openNew(scope, opening, write);
    if (outcome === "unknown") {
      const user = await this.deps.wallets.findForOpening(scope, opening.user_id, opening.id);
      if (!user || !ledgerOf(user).inflight.some((r) => r.id === opening.id)) return null;
    }
    // `opens` is read by compactions only, and an opening never settles a transaction.
    await finish(
      this.afterWrite({ _id: opening.user_id, project_id: scope.projectId, livemode: scope.livemode, opens: 0 }, opening, write.events, true),
    );
    return opening;
  }

  /**
   * Moves a transaction to `to` from one of `options.from`: 404 transaction_not_found when the caller cannot see
   * it, 409 invalid_state from any other status. Of two concurrent moves one wins; the other sees the new status.
   * A move with an Idempotency-Key stamps the transaction in the write that applies it; a resumed run of the same
   * request that finds its stamp on the transaction in the status it moves to answers it as the first run would
   * have (its events were written with the move), where any other mover's transaction is 409 invalid_state.
   */
  async move(id: string, to: Outcome, options: MoveOptions): Promise<TransactionRecord> {
    const read = () => this.deps.wallets.findHolder(id);
    return compareAndSet(`settling of transaction ${id}`, read, async (holder) => {
      const current = holder ? ledgerOf(holder).inflight.find((r) => r.id === id) : await this.deps.transactions.findById(id);
      if (!current || (options.scope && (current.project_id !== options.scope.projectId || current.livemode !== options.scope.livemode))) {
        throw svcError("transaction_not_found");
      }
      if (options.onlyType && current.type !== options.onlyType) {
        throw svcError("invalid_state", `Only a pending withdrawal can be canceled; this is a ${current.type}.`);
      }
      const mark = options.mark ?? null;
      if (mark?.resumed && current.moved_by === mark.stamp && current.status === to) {
        await this.finishResumed(holder, current);
        return current;
      }
      if (!options.from.includes(current.status) || !holder) {
        throw svcError("invalid_state", `The transaction is ${current.status}.`);
      }
      const next = this.nextRecord(current, to, options.failureCode ?? null, options.failureMessage ?? null, mark?.stamp ?? null);
      return (await this.write(current, next)) ? next : CHANGED;
    });
  }

  /** The transaction of this id in any tenant (internal callers): its ledger state while in flight, else its projection. */
  async find(id: string): Promise<TransactionRecord | null> {
    const holder = await this.deps.wallets.findHolder(id);
    return (holder ? ledgerOf(holder).inflight.find((r) => r.id === id) : undefined) ?? (await this.deps.transactions.findById(id));
  }

  /** The transaction as the caller may see it, or 404 transaction_not_found. */
  async get(scope: TenantScope, id: string): Promise<TransactionRecord> {
    const projected = await this.deps.transactions.find(scope, id);
    if (projected && isFinal(projected.status)) return projected;
    // Not final, or not projected yet: the ledger holds the latest state while the transaction is in flight.
    const holder = projected ? await this.deps.wallets.findById(projected.user_id) : await this.deps.wallets.findHolder(id);
    const inflight = holder ? ledgerOf(holder).inflight.find((r) => r.id === id) : undefined;
    const latest = inflight && inflight.project_id === scope.projectId && inflight.livemode === scope.livemode ? inflight : projected;
    if (!latest) throw svcError("transaction_not_found");
    return latest;
  }

  /**
   * Finishes what stopped processes left: projections behind the ledger and settled transactions not compacted.
   * Answers how many transactions it looked at.
   */
  async sweep(staleAfterMs: number): Promise<number> {
    const now = this.deps.clock();
    const before = new Date(now.getTime() - staleAfterMs);
    let seen = 0;
    let afterUser: string | null = null;
    for (;;) {
      const users: UserWithLedger[] = await this.deps.wallets.findWithInflight(afterUser, 100);
      if (users.length === 0) return seen;
      for (const user of users) {
        afterUser = user._id;
        const ledger = ledgerOf(user);
        const stale = ledger.inflight.filter((r) => r.updated_at <= before);
        seen += stale.length;
        const versions = await this.deps.transactions.versions(stale.map((r) => r.id));
        await this.deps.transactions.projectMany(stale.filter((r) => (versions.get(r.id) ?? 0) < r.version));
        await this.deps.wallets.compact(
          user._id,
          stale.filter((r) => isFinal(r.status)).map((r) => r.id),
          ledger.opens,
        );
        await this.adoptEarlierSteps(stale);
      }
    }
  }

  /**
   * Upgrade: a transaction opened by an earlier version, which kept its next step's time in the transaction
   * (`next_step_at`) rather than in a job, gets its job at that time (a no-op once it has one). Its next write drops
   * the field (nextRecord), so this happens at most until then.
   */
  private async adoptEarlierSteps(records: readonly TransactionRecord[]): Promise<void> {
    for (const record of records) {
      const { next_step_at: at } = record as TransactionRecord & { next_step_at?: Date | null };
      if (!at || isFinal(record.status)) continue;
      await this.deps.jobs.insertUnique<TransactionStepJob>(
        TRANSACTION_STEP_JOB,
        {
          transactionId: record.id,
          openedAt: record.created_at,
          completeAfterMs: record.type === "deposit" ? at.getTime() - record.created_at.getTime() : 0,
        },
        at,
        "transactionId",
      );
    }
  }

  /**
   * A run of a transaction's step job: does the step its state calls for when it is due, and answers when to look
   * again (the next step's time), or nothing when no step is left. A run that finds the step done (by an earlier
   * run that died before its job was saved, by a settlement call) or not due yet does no write.
   */
  private async runStep(job: TransactionStepJob): Promise<Date | undefined> {
    const now = this.deps.clock();
    try {
      const holder = await this.deps.wallets.findHolder(job.transactionId);
      const record = holder ? ledgerOf(holder).inflight.find((r) => r.id === job.transactionId) : undefined;
      if (!record) {
        // Settled and compacted, or not opened (yet): the job was written before the opening.
        if (await this.deps.transactions.findById(job.transactionId)) return undefined;
        const since = now.getTime() - new Date(job.openedAt).getTime();
        return since < OPENING_WINDOW_MS ? new Date(now.getTime() + Math.min(Math.max(since, 100), 10_000)) : undefined;
      }
      const due = stepDueAt(record, job.completeAfterMs);
      if (!due) return undefined;
      if (due > now) return due;
      return await this.advance(record, job.completeAfterMs);
    } catch (error) {
      this.deps.onBackgroundError(error);
      return new Date(now.getTime() + STEP_ERROR_RETRY_MS);
    }
  }

  /**
   * Takes `record`, as just read, one step on, and answers when its next step is due (now when the record moved
   * on meanwhile: the next run reads it again). Every write is conditional on that state, so a record that moved
   * on since (settled, canceled, stepped by another process) is left as it is.
   */
  private async advance(record: TransactionRecord, completeAfterMs: number): Promise<Date | undefined> {
    const after = async (next: TransactionRecord) =>
      (await this.write(record, next)) ? (stepDueAt(next, completeAfterMs) ?? undefined) : this.deps.clock();
    if (record.type === "deposit") return after(this.nextRecord(record, "completed", null, null));
    if (record.simulated) {
      if (record.status === "pending") return after(this.nextRecord(record, "processing", null, null));
      if (record.amount_cents === SANDBOX_FAILING_WITHDRAWAL_CENTS) {
        return after(this.nextRecord(record, "failed", SANDBOX_WITHDRAWAL_FAILURE_CODE, "The destination rejected the payout."));
      }
      return after(this.nextRecord(record, "completed", null, null));
    }
    // Live: processing first (it can no longer be canceled), then the custodian, idempotent per transaction.
    let processing = record;
    if (record.status === "pending") {
      processing = this.nextRecord(record, "processing", null, null);
      if (!(await this.write(record, processing))) return this.deps.clock();
    }
    const { id, user_id, wallet_id, amount_cents, fiat_currency } = processing;
    try {
      await this.deps.payouts.payOut(
        { transactionId: id, userId: user_id, walletId: wallet_id, amountCents: amount_cents, fiatCurrency: fiat_currency },
        AbortSignal.timeout(10_000),
      );
    } catch (error) {
      this.deps.onBackgroundError(error);
      return new Date(this.deps.clock().getTime() + PAYOUT_RETRY_MS);
    }
    await this.write(processing, { ...this.nextRecord(processing, "processing", null, null), handed_off: true });
    return undefined;
  }

  /**
   * What a move found applied by an earlier run of its request may have left undone: the projection and
   * compaction while the transaction is still in flight, and the relay of its owner's outbox (the move's events).
   */
  private async finishResumed(holder: UserWithLedger | null, record: TransactionRecord): Promise<void> {
    if (holder) {
      const owner = { _id: holder._id, project_id: holder.project_id, livemode: holder.livemode, opens: ledgerOf(holder).opens };
      await this.afterWrite(owner, record, holder.outbox ?? []);
      return;
    }
    const owner = await this.deps.wallets.findById(record.user_id).catch((error: unknown) => this.deps.onBackgroundError(error));
    if (owner && (owner.outbox ?? []).length > 0) await this.deps.relay.relayUserOutbox(owner).catch(this.deps.onBackgroundError);
  }

  /**
   * The record after a move: new status, failure, one version more, and the stamp
   * of the Idempotency-Key whose call made it (null for the simulator's steps and calls without a key).
   */
  private nextRecord(
    current: TransactionRecord,
    to: Outcome,
    failureCode: string | null,
    failureMessage: string | null,
    movedBy: string | null = null,
  ): TransactionRecord {
    const now = this.deps.clock();
    // An earlier version's schedule field, if any, goes with the first move (see adoptEarlierSteps).
    const { next_step_at: _earlierSchedule, ...record } = current as TransactionRecord & { next_step_at?: Date | null };
    return {
      ...record,
      status: to,
      failure_code: to === "failed" ? failureCode : null,
      failure_message: to === "failed" ? failureMessage : null,
      updated_at: now,
      version: current.version + 1,
      moved_by: movedBy,
    };
  }

  /** One conditional write from `current` to `next`; false when `current` is no longer the ledger's state. */
  private async write(current: TransactionRecord, next: TransactionRecord): Promise<boolean> {
    const events = eventTypesOf(current, next).map((type) => transactionEvent(type, next, next.updated_at));
    const owner = await this.deps.wallets.transition(current.user_id, current, next, movingDelta(current, next.status), events);
    if (!owner) return false;
    await this.afterWrite(owner, next, events);
    return true;
  }

  /**
   * After a write: the projection, the events' relay and the compaction of a settled transaction. A failure here
   * loses nothing: the sweepers (ledger and relay) finish it.
   */
  private async afterWrite(owner: LedgerOwner, record: TransactionRecord, events: OutboxEvent[], opened = false): Promise<void> {
    try {
      await this.deps.transactions.project(record, opened);
      if (isFinal(record.status)) await this.deps.wallets.compact(owner._id, [record.id], owner.opens);
    } catch (error) {
      this.deps.onBackgroundError(error);
    }
    if (events.length > 0) await this.deps.relay.relayUserOutbox({ ...owner, outbox: events }).catch(this.deps.onBackgroundError);
  }
}
