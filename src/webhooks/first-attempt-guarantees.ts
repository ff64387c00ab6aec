// The guarantee behind fan-out's first attempts, one Agenda job per fan-out batch instead of one per delivery. A
// delivering process that relays events sends their first attempts at once; one job (`webhook-first-attempts`,
// naming the batch's events) waits one lease later in case the process dies before recording them. Once every
// first attempt of the batch is recorded (and a failed one's retry has its own `webhook-attempt` job), the batch's
// job is removed. If it runs instead, it gives every pending delivery of those events that has no job its
// `webhook-attempt` job, and the deliveries go on from there as any other. A delivery's job per batch rather than
// per delivery: a job inserted and removed per delivery was a third of what the database did per delivery.
import type { Clock } from "../domain/clock.ts";
import { newUuid } from "../domain/random.ts";
import type { JobQueue, ScheduledJob } from "../jobs/job-queue.ts";
import { TurnBatch } from "../lib/turn-batch.ts";
import type { WebhookDeliveryRepository } from "../store/webhook-delivery-repository.ts";
import { type DeliveryJobData, jobDataOf } from "./delivery-job.ts";

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
  deliveries: WebhookDeliveryRepository;
  clock: Clock;
  jobs: Pick<JobQueue, "scheduleMany" | "moveMany">;
  /** Writes the `webhook-attempt` jobs of these deliveries; an existing one keeps its time. */
  addDeliveryJobs: (jobs: readonly ScheduledJob<DeliveryJobData>[]) => Promise<void>;
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
   * A run of a batch's job: its process did not record every first attempt within their lease. Every pending
   * delivery of its events gets its job if it has none: due when its lease ends (an attempt in flight: the
   * delivery's run counts it as lost if its lease is over), else at its next attempt's time.
   */
  async run(data: FirstAttemptsJobData): Promise<void> {
    const now = this.deps.clock();
    const pending = await this.deps.deliveries.findPendingOfEvents(data.eventIds);
    await this.deps.addDeliveryJobs(pending.map((d) => ({ data: jobDataOf(d), at: d.lease_until ?? d.next_attempt_at ?? now })));
  }
}
