// The guarantee behind fan-out's first attempts, one Agenda job per fan-out batch instead of one per delivery. A
// delivering process that relays events sends their first attempts at once, their records held until their
// outcomes; one job (`webhook-first-attempts`, naming the batch's events) waits one lease later in case the process
// dies before recording them. Once every first attempt of the batch is recorded (and a failed one's retry has its
// own `webhook-attempt` job), the batch's job is removed. If it runs instead, its events are fanned out again as a
// recovery: a delivery with no record gets one, pending with its job due at once, and a pending one with no job gets
// its job; the deliveries go on from there as any other. A job per batch rather than per delivery: a job inserted
// and removed per delivery was a third of what the database did per delivery.
import { newUuid } from "../domain/random.ts";
import type { JobQueue } from "../jobs/job-queue.ts";
import { TurnBatch } from "../lib/turn-batch.ts";

export const FIRST_ATTEMPTS_JOB = "webhook-first-attempts";

export interface FirstAttemptsJobData {
  batchId: string;
  eventIds: string[];
}

/** The first attempts of one fan-out batch, sent in this process, and the job that stands behind them. */
export interface FirstAttemptBatch {
  readonly id: string;
  /** Settles once the batch's job is written: only then may its removal be written. */
  readonly written: Promise<void>;
  /** First attempts not recorded yet. */
  unrecorded: number;
  /** Some attempt could not be recorded: the job stays, and runs. */
  kept: boolean;
}

export interface FirstAttemptGuaranteeDependencies {
  jobs: Pick<JobQueue, "scheduleMany" | "moveMany">;
  /** Fans these events out again as a recovery (WebhookFanout.recover). */
  recover: (eventIds: readonly string[]) => Promise<void>;
}

export class FirstAttemptGuarantees {
  private readonly removals: TurnBatch<string>;

  constructor(private readonly deps: FirstAttemptGuaranteeDependencies) {
    this.removals = new TurnBatch<string>(async (ids) => {
      await deps.jobs.moveMany(
        FIRST_ATTEMPTS_JOB,
        "batchId",
        ids.map((value) => ({ value, at: null })),
      );
      return ids.map(() => undefined);
    });
  }

  /** Writes the job behind `attempts` first attempts of these events, due at `at` (their lease's end). */
  write(eventIds: readonly string[], attempts: number, at: Date): FirstAttemptBatch {
    const id = newUuid();
    const data: FirstAttemptsJobData = { batchId: id, eventIds: [...new Set(eventIds)] };
    const written = this.deps.jobs.scheduleMany(FIRST_ATTEMPTS_JOB, [{ data, at }], "batchId", { keepExisting: true });
    written.catch(() => {});
    return { id, written, unrecorded: attempts, kept: false };
  }

  /**
   * One first attempt of the batch is done: `recorded` when its outcome (and a retry's job) is written. When the
   * last one is, and all were, the batch's job is removed.
   */
  async done(batch: FirstAttemptBatch, recorded: boolean): Promise<void> {
    if (!recorded) batch.kept = true;
    batch.unrecorded -= 1;
    if (batch.unrecorded > 0 || batch.kept) return;
    await batch.written;
    await this.removals.add(batch.id);
  }

  /**
   * A run of a batch's job: its process did not record every first attempt within their lease. Its events are
   * fanned out again as a recovery: the records its process held and never wrote are written, their jobs due at once;
   * a pending delivery with no job gets its job, due when its lease ends (an attempt in flight: the delivery's run
   * counts it as lost if its lease is over), else at its next attempt's time.
   */
  run(data: FirstAttemptsJobData): Promise<void> {
    return this.deps.recover(data.eventIds);
  }
}
