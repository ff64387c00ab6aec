// Durable jobs in MongoDB through Agenda: what must happen later survives a crash, and any worker process
// may run it. In the process that schedules a job, an in-memory channel wakes the worker at once instead of
// waiting for the next poll.
import { Agenda, InMemoryNotificationChannel, type Job } from "agenda";
import { MongoBackend, MongoChangeStreamNotificationChannel } from "@agendajs/mongo-backend";
import type { Db } from "mongodb";

export interface JobQueueOptions {
  /** How often workers look for due jobs scheduled by other processes (and after a crash). */
  pollIntervalMs: number;
  /** A job locked by a worker that died is run again after this. */
  lockLifetimeMs: number;
  maxConcurrency: number;
  /**
   * On a replica set, workers hear of jobs saved by any process through a change stream on the jobs
   * collection; otherwise only of their own process's jobs at once, and of others' at the next poll.
   */
  changeStreams: boolean;
}

export interface JobDefinitionOptions {
  concurrency?: number;
  lockLifetimeMs?: number;
}

/**
 * Runs a job. A returned date runs the same job again then (its `nextRunAt`, saved when the run ends): one job per
 * thing to do, rescheduled by its own runs (a delivery's next attempt, a transaction's next step).
 */
// biome-ignore lint/suspicious/noConfusingVoidType: handlers that never reschedule are plain `async (data) => {}`.
export type JobHandler<T> = (data: T) => Promise<Date | undefined | void>;

/**
 * Jobs an earlier version scheduled that no process runs any more, so their leftovers are only removed.
 * `webhook-delivery` held delivery retries before the delivery records became the only schedule of their
 * attempts (`next_attempt_at`); `ledger-step` held the ledger's simulator and payout steps before the transactions'
 * own `next_step_at` became their schedule (read by the ledger's poll).
 */
const RETIRED_JOBS = ["webhook-delivery", "ledger-step"];

export class JobQueue {
  private readonly agenda: Agenda;
  private running = false;

  constructor(
    private readonly db: Db,
    options: JobQueueOptions,
  ) {
    this.agenda = new Agenda({
      backend: new MongoBackend({ mongo: db, collection: "jobs" }),
      processEvery: options.pollIntervalMs,
      defaultLockLifetime: options.lockLifetimeMs,
      maxConcurrency: options.maxConcurrency,
      defaultConcurrency: options.maxConcurrency,
      removeOnComplete: true,
      notificationChannel: options.changeStreams
        ? new MongoChangeStreamNotificationChannel({ db, collection: "jobs" })
        : new InMemoryNotificationChannel(),
    });
  }

  define<T>(name: string, handler: JobHandler<T>, options: JobDefinitionOptions = {}): void {
    this.agenda.define<T>(
      name,
      async (job: Job<T>) => {
        const next = await handler(job.attrs.data);
        if (next instanceof Date) job.schedule(next);
      },
      {
        ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
        ...(options.lockLifetimeMs !== undefined ? { lockLifetime: options.lockLifetimeMs } : {}),
      },
    );
  }

  /**
   * Schedules `name` to run at `at`. With `uniqueBy` (fields of `data`), at most one such job exists: a second
   * schedule moves the existing one instead of adding another.
   */
  async schedule<T extends object>(name: string, data: T, at: Date, uniqueBy: (keyof T & string)[] = []): Promise<void> {
    // An API process never starts processing, so schedule waits for the connection itself.
    await this.agenda.ready;
    const job = this.agenda.create<T>(name, data);
    if (uniqueBy.length > 0) {
      job.unique(Object.fromEntries(uniqueBy.map((field) => [`data.${field}`, data[field]])));
    }
    await job.schedule(at).save();
  }

  /** Starts running due jobs in this process (worker role). */
  async start(): Promise<void> {
    await this.agenda.ready;
    await this.agenda.cancel({ names: RETIRED_JOBS });
    await this.agenda.start();
    this.running = true;
  }

  /** Stops taking jobs and waits for the running ones to finish. */
  async stop(): Promise<void> {
    if (this.running) await this.agenda.stop();
    this.running = false;
  }

  /**
   * Now minus the scheduled time of the oldest job that is due and not running (0 when none is): how far
   * the workers are behind. Only jobs of names this process defines count (not retired ones an older process
   * may still add during an upgrade).
   */
  async lagSeconds(now: Date): Promise<number> {
    const oldest = await this.db
      .collection<{ name: string; nextRunAt: Date | null; lockedAt: Date | null; disabled?: boolean }>("jobs")
      .findOne(
        { name: { $in: Object.keys(this.agenda.definitions) }, nextRunAt: { $lte: now }, lockedAt: null, disabled: { $ne: true } },
        { sort: { nextRunAt: 1 }, projection: { nextRunAt: 1 } },
      );
    return oldest?.nextRunAt ? Math.max(0, (now.getTime() - oldest.nextRunAt.getTime()) / 1000) : 0;
  }

  /** Runs `handler` for every job error, so failures reach the logs. */
  onFailure(handler: (error: Error, jobName: string) => void): void {
    this.agenda.on("fail", (error: Error | string, job: { attrs?: { name: string }; jobName?: string }) => {
      handler(error instanceof Error ? error : new Error(error), job.attrs?.name ?? job.jobName ?? "unknown");
    });
  }
}
