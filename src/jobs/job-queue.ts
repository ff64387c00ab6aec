// Durable jobs in MongoDB through Agenda: what must happen later survives a crash, and any worker process
// may run it. In the process that schedules a job, an in-memory channel wakes the worker at once instead of
// waiting for the next poll.
// First: it changes how Agenda's loggers are made, which Agenda does as it loads.
import "./agenda-debug-loggers.ts";
import { Agenda, exponential, type Job } from "agenda";
import type { AnyBulkWriteOperation, Db, Document } from "mongodb";
import { hostname } from "node:os";
import { BatchedJobRepository } from "./batched-job-repository.ts";
import { isDuplicateKeyError } from "../store/database.ts";
import { dropIndexesIfPresent } from "../store/earlier-indexes.ts";
import { batchedInsert, type DocumentWriteError, throwUnlessDuplicate } from "../store/write-batcher.ts";
import { WakeableChangeStreamChannel, WakeableInMemoryChannel } from "./wake-channels.ts";

export interface JobQueueOptions {
  /** How often workers look for due jobs scheduled by other processes (and after a crash). */
  pollIntervalMs: number;
  /** A job locked by a worker that died is run again after this. */
  lockLifetimeMs: number;
  maxConcurrency: number;
  /** Jobs of one name run at once unless its definition says otherwise; default `maxConcurrency`. */
  defaultConcurrency?: number;
  /**
   * On a replica set, workers hear of jobs saved by any process through a change stream on the jobs
   * collection; otherwise only of their own process's jobs at once, and of others' at the next poll.
   */
  changeStreams: boolean;
}

export interface JobDefinitionOptions {
  concurrency?: number;
  /** Jobs one lock batch of this name takes at most (default: its concurrency); see BatchedJobRepository.limitLocks. */
  lockBatch?: number;
  /**
   * Jobs of this name this process holds locked at most (default: its concurrency): those beyond the concurrency
   * wait locked in the repository and start as runs end; see BatchedJobRepository.limitLocks.
   */
  lockLimit?: number;
  lockLifetimeMs?: number;
}

/**
 * Runs a job. A returned date runs the same job again then (its `nextRunAt`, saved when the run ends): one job per
 * thing to do, rescheduled by its own runs (a delivery's next attempt, a transaction's next step).
 */
// biome-ignore lint/suspicious/noConfusingVoidType: handlers that never reschedule are plain `async (data) => {}`.
export type JobHandler<T> = (data: T) => Promise<Date | undefined | void>;

/** One job of a batch written by `scheduleMany`: its data and when it runs. */
export interface ScheduledJob<T> {
  data: T;
  at: Date;
}

/**
 * A run that throws (the database dropped a connection, a bug) is run again, 1 s later and then twice as long each
 * time up to 5 minutes, never given up: every job stands for something that must still happen (a delivery's next
 * attempt, a transaction's step), and a one-time job Agenda gave up on would never run again. The failure is
 * reported each time (`onFailure`).
 */
const RETRY_FAILED_RUNS = exponential({ delay: 1000, factor: 2, maxDelay: 300_000, maxRetries: Number.POSITIVE_INFINITY, jitter: 0.2 });

export class JobQueue {
  private readonly agenda: Agenda;
  private readonly repository: BatchedJobRepository;
  private readonly defaultConcurrency: number;
  private running = false;
  /** Hears of job failures and of a stop that could not unlock its jobs (onFailure). */
  private failureHandler: ((error: Error, jobName: string) => void) | undefined;
  /** Runs started in this process and not yet saved (stop waits for them). */
  private inFlight = 0;
  private idle: (() => void)[] = [];
  /**
   * The inserts of one event-loop turn (insertUnique) as one raw command. The driver's bulk write serialized every
   * job once to size it before serializing the command: its inserts of withdrawals' step jobs took about a third as
   * much of the API role's CPU as the withdrawal method's own code (write-batcher.ts says what a raw command skips).
   */
  private readonly insertJob: (job: Document) => Promise<DocumentWriteError | null>;

  constructor(
    private readonly db: Db,
    options: JobQueueOptions,
  ) {
    // Finished one-time jobs are removed by the save that ends their run (the repository), not by a second command.
    this.defaultConcurrency = options.defaultConcurrency ?? options.maxConcurrency;
    this.insertJob = batchedInsert<Document>(db, "jobs");
    this.repository = new BatchedJobRepository(db, "jobs", this.defaultConcurrency, true);
    const repository = this.repository;
    // Inserts of jobs due soon only (wake-channels.ts says why).
    const channel = options.changeStreams
      ? new WakeableChangeStreamChannel({ db, collection: "jobs", pollIntervalMs: options.pollIntervalMs })
      : new WakeableInMemoryChannel();
    repository.onRoom = (jobName) => void channel.wake(jobName);
    this.agenda = new Agenda({
      backend: { name: "MongoDB", repository, ownsConnection: false, connect: () => repository.connect(), disconnect: async () => {} },
      processEvery: options.pollIntervalMs,
      defaultLockLifetime: options.lockLifetimeMs,
      maxConcurrency: options.maxConcurrency,
      defaultConcurrency: this.defaultConcurrency,
      removeOnComplete: false,
      // Which process locks a job (lastModifiedBy): host and process id.
      name: `${hostname()}:${process.pid}`,
      notificationChannel: channel,
    });
    this.agenda.on("start", () => {
      this.inFlight += 1;
    });
    // Emitted once the run's outcome (its next run, or none) is saved.
    this.agenda.on("complete", () => {
      this.inFlight -= 1;
      if (this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
    });
  }

  /**
   * A unique index on `data.<field>` for the jobs of `name`, so that jobs made unique by that field (see
   * `scheduleMany`) are found by an index and never doubled by concurrent writers.
   */
  async ensureUniqueIndex(name: string, field: string): Promise<void> {
    await this.db
      .collection("jobs")
      .createIndex({ [`data.${field}`]: 1 }, { name: `${name}_unique_${field}`, unique: true, partialFilterExpression: { name } });
  }

  /**
   * Schedules many jobs of `name`, each unique by `data[uniqueBy]` (an existing one is moved to its new time, its
   * data replaced), in one bulk write: the batch form of `schedule`, for writers of many jobs at once. A job
   * running now (locked) is left alone: its run decides what follows it. With `keepExisting`, only missing jobs
   * are added and an existing one keeps its time: plain inserts, which the unique index of `ensureUniqueIndex`
   * refuses for a job that exists (an upsert costs the database a query and more per job).
   */
  async scheduleMany<T extends object>(
    name: string,
    jobs: readonly ScheduledJob<T>[],
    uniqueBy: keyof T & string,
    { keepExisting = false } = {},
  ): Promise<void> {
    if (jobs.length === 0) return;
    await this.agenda.ready;
    const operations: AnyBulkWriteOperation<Document>[] = jobs.map(({ data, at }) =>
      keepExisting
        ? { insertOne: { document: newJob(name, data, at) } }
        : {
            updateOne: {
              filter: { name, [`data.${uniqueBy}`]: data[uniqueBy], lockedAt: null },
              update: { $set: { data, nextRunAt: at }, $setOnInsert: { ...NEW_JOB_FIELDS, name } },
              upsert: true,
            },
          },
    );
    await this.db
      .collection("jobs")
      .bulkWrite(operations, { ordered: false })
      .catch((error: unknown) => {
        // A job that exists refuses the insert; a job locked by a run is not matched, so the upsert collides with
        // it on the unique index: that run decides.
        if (!isOnlyDuplicateKeys(error)) throw error;
      });
  }

  /**
   * Moves jobs of `name` found by `data[field]` to a new time, or removes them (`at` null), in one bulk write;
   * a job running now (locked) is left to its run.
   */
  async moveMany(name: string, field: string, moves: readonly { value: unknown; at: Date | null }[]): Promise<void> {
    if (moves.length === 0) return;
    await this.db.collection("jobs").bulkWrite(
      moves.map(({ value, at }) => {
        const filter = { name, [`data.${field}`]: value, lockedAt: null };
        return at === null ? { deleteOne: { filter } } : { updateOne: { filter, update: { $set: { nextRunAt: at } } } };
      }),
      { ordered: false },
    );
  }

  define<T>(name: string, handler: JobHandler<T>, options: JobDefinitionOptions = {}): void {
    // As many locked at once as may run at once: the rest of a backlog stays free for other workers.
    const concurrency = options.concurrency ?? this.defaultConcurrency;
    this.repository.limitLocks(name, options.lockLimit ?? concurrency, options.lockBatch, concurrency);
    this.agenda.define<T>(
      name,
      async (job: Job<T>) => {
        const next = await handler(job.attrs.data);
        if (next instanceof Date) job.schedule(next);
      },
      {
        ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
        ...(options.lockLifetimeMs !== undefined ? { lockLifetime: options.lockLifetimeMs } : {}),
        backoff: RETRY_FAILED_RUNS,
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
      await this.uniqueKeyIndex(uniqueBy);
      job.unique(Object.fromEntries(uniqueBy.map((field) => [`data.${field}`, data[field]])));
    }
    await job.schedule(at).save();
  }

  /**
   * The indexes Agenda's queries need beyond its own. Its due-job query asks for a job of a name that is free and
   * due or whose lock has expired, earliest first; its own index (name, nextRunAt, ...) walks past every locked job
   * to reach the next free one, while (name, lockedAt, nextRunAt, priority) answers each of the two by a range.
   */
  async ensureIndexes(): Promise<void> {
    await this.db.collection("jobs").createIndex({ name: 1, lockedAt: 1, nextRunAt: 1, priority: -1 });
  }

  private readonly uniqueKeyIndexes = new Map<string, Promise<string>>();

  /** The index a unique save finds its job by, (name, data.<field>...): made once per process and set of fields. */
  private uniqueKeyIndex(fields: string[]): Promise<string> {
    const key = fields.join("\0");
    let made = this.uniqueKeyIndexes.get(key);
    if (!made) {
      made = this.db.collection("jobs").createIndex({ name: 1, ...Object.fromEntries(fields.map((field) => [`data.${field}`, 1])) });
      made.catch(() => this.uniqueKeyIndexes.delete(key));
      this.uniqueKeyIndexes.set(key, made);
    }
    return made;
  }

  /**
   * Adds the job `name` for `data`, due at `at`, unless a job of that name with the same `uniqueBy` field already
   * exists (which is then left as it is). Calls made in the same event-loop turn share one command, and the unique
   * index of `ensureUniqueIndex` keeps them to one job. A job saved this way wakes other processes through the
   * change stream, this one at its next poll.
   */
  insertUnique<T extends object>(name: string, data: T, at: Date, uniqueBy: keyof T & string): Promise<void> {
    // Earlier versions made an index of their own, (name, uniqueBy) of the same jobs: its name, equal in every key,
    // cost each insert's search a comparison more at every step. Dropped once the one-field index is there.
    this.uniqueIndexes[name] ??= this.ensureUniqueIndex(name, uniqueBy).then(() =>
      dropIndexesIfPresent(this.db.collection("jobs"), [`unique_${name}`]),
    );
    // A plain insert (an upsert costs several times more): the unique index refuses a second job, which then exists.
    const job = newJob(name, data, at);
    return this.uniqueIndexes[name].then(async () => {
      const error = await this.insertJob(job);
      throwUnlessDuplicate(error);
    });
  }

  private readonly uniqueIndexes: Record<string, Promise<void>> = {};

  /** Removes the jobs of `name` whose data has these fields (a job made for something that will not happen). */
  async cancel(name: string, data: Record<string, unknown>): Promise<void> {
    await this.agenda.ready;
    await this.agenda.cancel({ name, data });
  }

  /**
   * Runs `handler` about every `intervalMs`, in one process at a time: one job of this name, whoever saves it,
   * moved along by its own runs and taken by whichever worker finds it due first.
   */
  async every(name: string, intervalMs: number, handler: () => Promise<unknown>): Promise<void> {
    this.define(name, async () => {
      await handler();
    });
    await this.agenda.ready;
    await this.agenda.every(intervalMs, name);
    // `every` keeps the time of the next run already saved (so that starting processes do not all run it now), which
    // a longer interval of an earlier configuration may have put far off: no later than one interval from now.
    await this.db.collection("jobs").updateOne({ name, type: "single" }, { $min: { nextRunAt: new Date(Date.now() + intervalMs) } });
  }

  /** Starts running due jobs in this process (worker role). */
  async start(): Promise<void> {
    await this.agenda.ready;
    await this.ensureIndexes();
    this.repository.reopen();
    await this.agenda.start();
    this.running = true;
  }

  /**
   * Stops taking jobs (those locked but not started are unlocked for other processes) and waits for the running
   * ones to finish and save what follows them.
   */
  async stop(): Promise<void> {
    if (this.running) {
      try {
        await this.repository.close();
        await this.agenda.stop();
      } catch (error) {
        // The database is gone (a failure the process may be stopping for): the jobs this process locked stay
        // locked, and other processes take them over when their lock lifetime ends. Stopping goes on.
        this.failureHandler?.(error instanceof Error ? error : new Error(String(error)), "stopping the job queue");
      }
    }
    this.running = false;
    if (this.inFlight > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  /**
   * Now minus the scheduled time of the oldest job that is due and not running (0 when none is): how far
   * the workers are behind. Only jobs of names this process defines count, or of the names given.
   */
  async lagSeconds(now: Date, names: readonly string[] = Object.keys(this.agenda.definitions)): Promise<number> {
    const oldest = await this.db
      .collection<{ name: string; nextRunAt: Date | null; lockedAt: Date | null; disabled?: boolean }>("jobs")
      .findOne(
        { name: { $in: [...names] }, nextRunAt: { $lte: now }, lockedAt: null, disabled: { $ne: true } },
        { sort: { nextRunAt: 1 }, projection: { nextRunAt: 1 } },
      );
    return oldest?.nextRunAt ? Math.max(0, (now.getTime() - oldest.nextRunAt.getTime()) / 1000) : 0;
  }

  /** Runs `handler` for every job error, so failures reach the logs. */
  onFailure(handler: (error: Error, jobName: string) => void): void {
    this.failureHandler = handler;
    this.agenda.on("fail", (error: Error | string, job: { attrs?: { name: string }; jobName?: string }) => {
      handler(error instanceof Error ? error : new Error(error), job.attrs?.name ?? job.jobName ?? "unknown");
    });
  }
}

/**
 * A new job of `name`, due at `nextRunAt`: the fields Agenda's own inserts give a new job and, null, the state fields
 * that the save ending a run sets (BatchedJobRepository.saveState), so that its first save replaces values instead
 * of adding six fields to the stored document, which costs the database more. One object literal: a spread of
 * shared defaults copied them property by property for every job inserted (a step job per withdrawal).
 */
function newJob(name: string, data: unknown, nextRunAt: Date) {
  return {
    priority: 0,
    type: "normal",
    lockedAt: null,
    lastModifiedBy: null,
    disabled: null,
    lastRunAt: null,
    progress: null,
    failReason: null,
    failCount: null,
    failedAt: null,
    lastFinishedAt: null,
    name,
    data,
    nextRunAt,
  };
}

/** A new job's fields besides its name, data and time (an upsert's `$setOnInsert`), taken from `newJob`. */
const { name: _name, data: _data, nextRunAt: _nextRunAt, ...NEW_JOB_FIELDS } = newJob("", null, new Date(0));

/** Whether a bulk write failed only on duplicate keys (code 11000). */
function isOnlyDuplicateKeys(error: unknown): boolean {
  const writeErrors = (error as { writeErrors?: { code?: number }[] | { code?: number } }).writeErrors;
  const list = Array.isArray(writeErrors) ? writeErrors : writeErrors ? [writeErrors] : [];
  return list.length > 0 && list.every(isDuplicateKeyError);
}
