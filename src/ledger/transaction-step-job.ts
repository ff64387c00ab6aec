// A transaction's steps (the simulator's and the payout hand-off's) are one Agenda job per transaction
// (`transaction-step`, unique by its id), written before the transaction it moves. Each run reads the
// transaction, does the step its state calls for if it is due, and answers when to look again, which Agenda saves
// as the job's next run; a run that finds the step done or not due writes nothing.
import type { Clock } from "../domain/clock.ts";
import { isFinal } from "../domain/transaction-transitions.ts";
import type { JobQueue } from "../jobs/job-queue.ts";
import type { TransactionRecord, TransactionRepository } from "../store/transaction-repository.ts";
import { inflightOf, ownerOf, type WalletLedgerRepository } from "../store/wallet-ledger.ts";
import type { LedgerWriter } from "./ledger-writer.ts";
import { type PayoutPort, PayoutSteps, payoutStepDueAt } from "./payout-steps.ts";
import { SimulatorSteps, simulatorStepDueAt } from "./simulator-steps.ts";

/** The job of a transaction's steps: one per transaction, unique by its id. */
export const TRANSACTION_STEP_JOB = "transaction-step";
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

export interface TransactionStepsDependencies {
  wallets: WalletLedgerRepository;
  transactions: TransactionRepository;
  writer: LedgerWriter;
  payouts: PayoutPort;
  jobs: JobQueue;
  /**
   * Step runs at once: each is a read and a write, sent with the other runs' in one command, so a run mostly
   * waits, and more at once make fewer and larger commands (less CPU per step in the worker and the database).
   */
  stepConcurrency?: number;
  clock: Clock;
  onBackgroundError: (error: unknown) => void;
}

/**
 * Lock batches the step runs of a process are taken in (each of concurrency / this): the runs of one batch go
 * through their batched reads and writes together, so groups taken one after the other keep several stages, and
 * both the worker and the database, busy at once.
 */
const STEP_LOCK_GROUPS = 5;

/** When the step that `record`'s state calls for is due; null when none is (settled, or moved by settlement calls only). */
function stepDueAt(record: TransactionRecord, completeAfterMs: number): Date | null {
  return record.simulated ? simulatorStepDueAt(record, completeAfterMs) : payoutStepDueAt(record);
}

export class TransactionSteps {
  private readonly simulator: SimulatorSteps;
  private readonly payout: PayoutSteps;

  constructor(private readonly deps: TransactionStepsDependencies) {
    this.simulator = new SimulatorSteps(deps);
    this.payout = new PayoutSteps(deps);
    deps.jobs.define<TransactionStepJob>(
      TRANSACTION_STEP_JOB,
      (job) => this.run(job),
      deps.stepConcurrency === undefined ? {} : { concurrency: deps.stepConcurrency, lockBatch: Math.ceil(deps.stepConcurrency / STEP_LOCK_GROUPS) },
    );
  }

  /** The step job of a transaction about to be opened, first due `at` (left as it is when a run of the same request wrote it already). */
  schedule(record: TransactionRecord, at: Date): Promise<void> {
    const job: TransactionStepJob = {
      transactionId: record.id,
      openedAt: record.created_at,
      completeAfterMs: record.type === "deposit" ? at.getTime() - record.created_at.getTime() : 0,
    };
    return this.deps.jobs.insertUnique(TRANSACTION_STEP_JOB, job, at, "transactionId");
  }

  /** Removes the step job of a transaction whose opening was refused. */
  cancel(transactionId: string): Promise<void> {
    return this.deps.jobs.cancel(TRANSACTION_STEP_JOB, { transactionId });
  }

  /**
   * A run of a transaction's step job: does the step its state calls for when it is due, and answers when to look
   * again (the next step's time), or nothing when no step is left. A run that finds the step done (by an earlier
   * run that died before its job was saved, by a settlement call) or not due yet does no write.
   */
  private async run(job: TransactionStepJob): Promise<Date | undefined> {
    const now = this.deps.clock();
    try {
      const holder = await this.deps.wallets.findHolder(job.transactionId);
      const record = inflightOf(holder, job.transactionId);
      if (!holder || !record) {
        // Settled and compacted (its projection final), or not opened (yet): the job was written before the opening.
        // A projection not final means the transaction was opened meanwhile (between this run's two reads): it is
        // there to move, and is looked at again soon, where ending the job would leave it pending for ever.
        const projected = await this.deps.transactions.findById(job.transactionId);
        if (projected && isFinal(projected.status)) return undefined;
        const since = now.getTime() - new Date(job.openedAt).getTime();
        const again = new Date(now.getTime() + Math.min(Math.max(since, 100), 10_000));
        return projected || since < OPENING_WINDOW_MS ? again : undefined;
      }
      const due = stepDueAt(record, job.completeAfterMs);
      if (!due) return undefined;
      if (due > now) return due;
      const owner = ownerOf(holder);
      return await (record.simulated ? this.simulator.take(owner, record, job.completeAfterMs) : this.payout.take(owner, record));
    } catch (error) {
      this.deps.onBackgroundError(error);
      return new Date(now.getTime() + STEP_ERROR_RETRY_MS);
    }
  }
}
