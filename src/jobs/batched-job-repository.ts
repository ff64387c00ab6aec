// Agenda's MongoDB repository, with the commands of many job runs written together. Agenda asks for one due
// job at a time and saves each run's state by itself: one round trip per lock attempt (and a failed attempt
// at the end of every fill it starts, one fill per change-stream notification), one per state save and one per
// removal. Here the lock attempts of one job name share a batch (one find of the due jobs, one update that locks
// them, one find of those it won), the state saves of one event-loop turn are one raw update command, a finished
// one-time job is removed by the save that ends its run instead of being saved and then removed, and the save
// that starts a run is not written (see saveJobState). What Agenda decides (which job is due, its lock and lock
// lifetime, its retries and next run) is unchanged.
//
// Agenda, without a lock limit, locks every due job it finds into its local queue, so one process would take a whole
// backlog at once (none left to other workers, and jobs waiting locally past their lock lifetime); with one, it
// looks again only at its next poll. Here a job name is locked up to its lock limit (what may run of it at once, or
// more for runs that mostly wait on round trips: the next ones then wait locked here, see limitLocks): past it a
// fill finds nothing, and once its runs have freed half of it (or one lock batch's worth, for a name whose
// batches are smaller than its limit) Agenda is woken to lock more (`onRoom`).
// A run holds its place until the save that ends it is written: Agenda counts it as running until then, and a job
// handed over while Agenda's count is full waits in Agenda's queue. A job locked before it is due (a scan locks what
// falls due before the next one) waits here and is handed once due, Agenda woken then: Agenda's queue holds only
// due jobs, which it scans whole for every job it starts.
//
// Agenda drops a job whose lock expired before it could start it, without running or unlocking it: the job then
// waits locked until its lock lifetime is over. On a loaded database a batch's round trips can age its locks that
// far, so a locked job is handed to Agenda only with at least half of its lock lifetime left; older ones are
// unlocked, and the next batch locks them afresh.
import { MongoJobRepository } from "@agendajs/mongo-backend";
import { type JobId, type JobParameters, type JobRepositoryOptions, toJobId } from "agenda";
import { type Collection, type Db, type Document, ObjectId } from "mongodb";
import { TurnBatch } from "../lib/turn-batch.ts";
import { rawDeletes, rawUpdates } from "../store/write-batcher.ts";

/** Agenda's order of due jobs: earliest first, then highest priority. */
const DUE_ORDER = { nextRunAt: 1, priority: -1 } as const;

/** Statements per command of state saves and removals: each a few hundred bytes, far under a command's 16 MiB. */
const STATEMENTS_PER_COMMAND = 1000;

/** The lock batches of one job name. */
class NameLocks {
  constructor(
    /** Jobs this process holds locked at most: handed to Agenda, and locked ahead in `buffer`. */
    readonly limit: number,
    /** Jobs one lock batch takes at most. */
    readonly batch: number,
    /** Jobs handed to Agenda at most (at most `limit`); the rest of what is locked waits in `buffer`. */
    readonly handLimit: number,
  ) {}
  /** Jobs this process locked and has not handed to Agenda yet, in due order. */
  buffer: JobParameters[] = [];
  /** No job of `buffer` was locked before this (ms): its aged locks are looked for only once this ages. */
  oldestLock = Number.POSITIVE_INFINITY;
  /** Jobs handed to Agenda whose run has not ended. */
  held = 0;
  /** When the first job of `buffer` falls due Agenda is woken (its timer, and that time). */
  wakeTimer: ReturnType<typeof setTimeout> | undefined;
  wakeAt: number | null = null;
  /** A fill found the limit reached: Agenda is woken once there is room. */
  starved = false;
  /** Batches started and finished so far. */
  started = 0;
  finished = 0;
  running: Promise<void> | null = null;

  /** Whether jobs are locked ahead of what Agenda is handed (a lock limit above the hand limit). */
  get locksAhead(): boolean {
    return this.handLimit < this.limit;
  }

  /** Places free when Agenda is woken again: a few runs' worth when jobs wait locked ahead, else a batch's. */
  get wakeRoom(): number {
    return this.locksAhead ? Math.max(1, Math.floor(this.batch / 8)) : Math.min(this.batch, this.limit / 2);
  }
}

interface StateSave {
  id: ObjectId;
  name: string;
  set: Document;
}

let lastLockTime = 0;

/**
 * The time a batch locks its jobs with, never the same twice in this process: with the process's name
 * (`lastModifiedBy`), it tells the jobs this batch won from those locked by anyone else at the same moment.
 */
function uniqueLockTime(at = Date.now()): Date {
  lastLockTime = Math.max(at, lastLockTime + 1);
  return new Date(lastLockTime);
}

export class BatchedJobRepository extends MongoJobRepository {
  private readonly jobs: Collection<Document>;
  private readonly locks = new Map<string, NameLocks>();
  private open = true;
  private readonly stateSaves = new TurnBatch<StateSave>((saves) => this.writeStates(saves));
  private readonly removals = new TurnBatch<StateSave>((done) => this.removeFinished(done));

  /** The lock time of each job this process locked and whose run has not ended (by id). */
  private readonly lockTimes = new Map<string, number>();
  /** The jobs whose run started here and has not ended (by id). */
  private readonly running = new Set<string>();

  /** Told when a job name that reached its lock limit has room again (JobQueue wakes Agenda). */
  onRoom: (jobName: string) => void = () => {};
  private readonly lockLimits = new Map<string, { limit: number; batch: number; handLimit: number }>();

  constructor(
    private readonly db: Db,
    collection: string,
    /** The lock limit of a job name without its own (`limitLocks`). */
    private readonly defaultLockLimit: number,
    /** One-time jobs are removed when their run succeeds (Agenda's removeOnComplete, done by the end-of-run save). */
    private readonly removeOnComplete: boolean,
  ) {
    // Agenda's own index (name, nextRunAt, priority, lockedAt, disabled) is not made: JobQueue.ensureIndexes makes
    // the one the due-job queries need, and every job written, locked or removed would keep both up to date.
    super({ mongo: db, db: { collection }, ensureIndex: false });
    this.jobs = db.collection(collection);
  }

  /**
   * Jobs of `jobName` this process holds locked at most (those running and those about to), and how many one lock
   * batch takes at most (default: the limit). Runs locked together move together through the batched reads and
   * writes that follow (each stage one command for all of them), so the worker and the database take turns; smaller
   * lock batches, taken one after the other, start the runs in groups that are at different stages at once.
   * With `handLimit` below the limit, at most that many are handed to Agenda (what may run at once) and the rest
   * wait locked here, the next lock batch taken while they last: a run that ends is followed at once, without
   * a lock batch's round trips, and Agenda's own queue stays short (it scans all of it for every job it starts).
   */
  limitLocks(jobName: string, limit: number, batch = limit, handLimit = limit): void {
    const max = Math.max(1, limit);
    this.lockLimits.set(jobName, { limit: max, batch: Math.min(max, Math.max(1, batch)), handLimit: Math.min(max, Math.max(1, handLimit)) });
  }

  private locksOf(jobName: string): NameLocks {
    let locks = this.locks.get(jobName);
    if (!locks) {
      const { limit, batch, handLimit } = this.lockLimits.get(jobName) ?? {
        limit: this.defaultLockLimit,
        batch: this.defaultLockLimit,
        handLimit: this.defaultLockLimit,
      };
      this.locks.set(jobName, (locks = new NameLocks(limit, batch, handLimit)));
    }
    return locks;
  }

  /** A run of `jobName` ended (or its job was unlocked): room for another. */
  private release(jobName: string): void {
    const locks = this.locksOf(jobName);
    locks.held = Math.max(0, locks.held - 1);
    if (locks.starved && locks.held <= locks.handLimit - locks.wakeRoom) {
      locks.starved = false;
      this.onRoom(jobName);
    }
  }

  override async unlockJob(job: JobParameters): Promise<void> {
    this.lockTimes.delete(String(job._id));
    await super.unlockJob(job);
    this.release(job.name);
  }

  /**
   * Unlocks jobs this process holds (Agenda's stop), except those whose run is under way: the save that ends the
   * run unlocks each, so no other process starts it meanwhile (its stored state is still the one it was locked in).
   */
  override async unlockJobs(jobIds: (JobId | string)[]): Promise<void> {
    const idle = jobIds.filter((id) => !this.running.has(String(id)));
    for (const id of idle) this.lockTimes.delete(String(id));
    await super.unlockJobs(idle);
  }

  /** Lets lock batches run (again), after `close`. */
  reopen(): void {
    this.open = true;
  }

  /**
   * Stops locking: the batches under way end, and every job locked but not handed to Agenda is unlocked for other
   * processes. Called before Agenda stops, so that what Agenda was handed is among the jobs it unlocks.
   */
  async close(): Promise<void> {
    this.open = false;
    await Promise.all([...this.locks.values()].map((l) => l.running));
    for (const l of this.locks.values()) clearTimeout(l.wakeTimer);
    const ids = [...this.locks.values()].flatMap((l) => l.buffer.splice(0).map((job) => job._id!));
    // What Agenda holds, it unlocks or finishes itself; counted afresh when locking starts again.
    this.locks.clear();
    await this.unlockJobs(ids);
  }

  /**
   * The next due job of `jobName`, locked for this process. Concurrent callers share one batch; a caller is
   * answered by a batch started after it asked (so a job saved before the call is seen), or from what an earlier
   * batch locked and nobody took yet.
   */
  override async getNextJobToRun(
    jobName: string,
    nextScanAt: Date,
    lockDeadline: Date,
    now: Date | undefined,
    options: JobRepositoryOptions | undefined,
  ): Promise<JobParameters | undefined> {
    const locks = this.locksOf(jobName);
    const needed = locks.started + 1;
    // Agenda's lock deadline is now minus the job's lock lifetime.
    const lockLifetimeMs = Date.now() - lockDeadline.getTime();
    const lastModifiedBy = options?.lastModifiedBy ?? null;
    for (;;) {
      if (!this.open) return undefined;
      if (locks.held >= locks.handLimit) {
        locks.starved = true;
        return undefined;
      }
      const stale = takeAgedLocks(locks, lockLifetimeMs);
      if (stale.length > 0) {
        await this.unlockJobs(stale);
        continue;
      }
      if (dueLater(locks.buffer[0])) {
        // A job is handed once due, not before: Agenda would time it itself and, until it starts, scan it again at
        // every start and every timer of its queue (each scan comparing every job with those it handled), a cost
        // that grows with the square of the jobs it holds. A batch may still find jobs due before it.
        if (locks.running) {
          await locks.running;
          continue;
        }
        if (locks.finished < needed && locks.held + locks.buffer.length < locks.limit) {
          this.startLockBatch(jobName, locks, nextScanAt, lockDeadline, lastModifiedBy, now);
          continue;
        }
        this.wakeWhenDue(jobName, locks, locks.buffer[0]!);
        return undefined;
      }
      const job = locks.buffer.shift();
      if (job) {
        locks.held += 1;
        // The next batch is locked while the buffer lasts, once a whole one fits under the limit.
        if (locks.locksAhead && !locks.running && locks.held + locks.buffer.length <= locks.limit - locks.batch) {
          this.startLockBatch(jobName, locks, nextScanAt, lockDeadline, lastModifiedBy, now);
        }
        return job;
      }
      if (locks.running) {
        await locks.running;
        continue;
      }
      if (locks.finished >= needed) return undefined;
      if (locks.held >= locks.limit) {
        locks.starved = true;
        return undefined;
      }
      this.startLockBatch(jobName, locks, nextScanAt, lockDeadline, lastModifiedBy, now);
    }
  }

  /** Wakes Agenda to take the jobs of `jobName` when `job`, the first of its buffer, falls due (one timer, the earliest). */
  private wakeWhenDue(jobName: string, locks: NameLocks, job: JobParameters): void {
    const at = new Date(job.nextRunAt!).getTime();
    if (locks.wakeAt !== null && locks.wakeAt <= at) return;
    clearTimeout(locks.wakeTimer);
    locks.wakeAt = at;
    locks.wakeTimer = setTimeout(
      () => {
        locks.wakeAt = null;
        if (this.open) this.onRoom(jobName);
      },
      Math.max(0, at - Date.now()),
    );
    locks.wakeTimer.unref();
  }

  /** Starts a lock batch of `jobName` for the room left under its limit; its jobs go to the buffer. */
  private startLockBatch(
    jobName: string,
    locks: NameLocks,
    nextScanAt: Date,
    lockDeadline: Date,
    lastModifiedBy: string | null,
    now: Date | undefined,
  ): void {
    locks.started += 1;
    const count = Math.min(locks.batch, locks.limit - locks.held - locks.buffer.length);
    locks.running = this.lockBatch(jobName, nextScanAt, lockDeadline, lastModifiedBy, now, count)
      .then(
        async (jobs) => {
          if (this.open) {
            locks.buffer.push(...jobs);
            for (const job of jobs) locks.oldestLock = Math.min(locks.oldestLock, lockTimeOf(job));
            // Batches lock in due order, but a later one may find jobs written since, due before those waiting.
            if (jobs.length > 0 && locks.buffer.length > jobs.length) locks.buffer.sort(inDueOrder);
          } else await this.unlockJobs(jobs.map((j) => j._id!));
        },
        () => undefined,
      )
      .finally(() => {
        locks.finished += 1;
        locks.running = null;
      });
    // A batch that failed (the database is gone) answers its callers with nothing, as a failed lock attempt would.
  }

  /** Locks up to `count` due jobs of `name`: those another process locked meanwhile are left to it. */
  private async lockBatch(
    name: string,
    nextScanAt: Date,
    lockDeadline: Date,
    lastModifiedBy: string | null,
    now: Date | undefined,
    count: number,
  ): Promise<JobParameters[]> {
    // Agenda's due-job query: a free job due by the next scan, or one whose lock has expired.
    const due = {
      name,
      disabled: { $ne: true },
      $or: [{ lockedAt: { $eq: null }, nextRunAt: { $lte: nextScanAt } }, { lockedAt: { $lte: lockDeadline } }],
    };
    for (;;) {
      // batchSize: all in the first reply (a cursor answers 101 documents by default, then a getMore for the rest).
      const candidates = await this.jobs.find(due, { sort: DUE_ORDER, limit: count, batchSize: count, projection: { _id: 1 } }).toArray();
      if (candidates.length === 0) return [];
      const ids = candidates.map((c) => c._id);
      const lockedAt = uniqueLockTime(now?.getTime());
      const { modifiedCount } = await this.jobs.updateMany({ ...due, _id: { $in: ids } }, { $set: { lockedAt, lastModifiedBy } });
      // Every candidate taken by another process meanwhile: the next ones may be free (a single lock attempt of
      // Agenda's would have found them).
      if (modifiedCount === 0) continue;
      const won = await this.jobs.find({ _id: { $in: ids }, lockedAt, lastModifiedBy }, { sort: DUE_ORDER, batchSize: ids.length }).toArray();
      for (const job of won) this.lockTimes.set((job._id as ObjectId).toHexString(), lockedAt.getTime());
      return won.map(toJobParameters);
    }
  }

  /**
   * Saves the state Agenda gives a job at the end of its run (and at a `touch`), batched with the other saves of
   * this turn. The save that ends a successful run of a one-time job (no next run, not failed) removes it instead.
   * The save that starts a run (the lock this process wrote, the run's start time, the next run of a repeating
   * job) is not written: the lock already stored says all that matters until the run ends (the job is this
   * process's until its lock lifetime passes, and is then run again wherever its run died; Agenda's stop leaves it
   * locked, see unlockJobs), and the end's save writes the rest.
   */
  override async saveJobState(job: JobParameters, options: JobRepositoryOptions | undefined): Promise<void> {
    if (!job._id) throw new Error("Cannot save job state without job ID");
    const id = new ObjectId(String(job._id));
    const key = id.toHexString();
    if (job.lockedAt && this.lockTimes.get(key) === new Date(job.lockedAt).getTime()) {
      this.running.add(key);
      return;
    }
    // The save that ends a run unlocks the job (lockedAt unset) and frees its place once written; a touch moves
    // the lock on.
    if (!job.lockedAt) {
      return this.saveState(job, id, options).finally(() => {
        this.lockTimes.delete(key);
        this.running.delete(key);
        this.release(job.name);
      });
    }
    return this.saveState(job, id, options);
  }

  private saveState(job: JobParameters, id: ObjectId, options: JobRepositoryOptions | undefined): Promise<void> {
    if (this.removeOnComplete && finishedForGood(job)) return this.removals.add({ id, name: job.name, set: {} });
    // The fields and the refusal of MongoJobRepository.saveJobState.
    const set = {
      lockedAt: job.lockedAt ? new Date(job.lockedAt) : null,
      nextRunAt: job.nextRunAt ? new Date(job.nextRunAt) : null,
      lastRunAt: job.lastRunAt ? new Date(job.lastRunAt) : null,
      progress: job.progress ?? null,
      failReason: job.failReason ?? null,
      failCount: job.failCount ?? null,
      failedAt: job.failedAt ? new Date(job.failedAt) : null,
      lastFinishedAt: job.lastFinishedAt ? new Date(job.lastFinishedAt) : null,
      lastModifiedBy: options?.lastModifiedBy ?? null,
    };
    return this.stateSaves.add({ id, name: job.name, set });
  }

  private async writeStates(saves: StateSave[]): Promise<(undefined | Error)[]> {
    // Raw update commands: the driver's bulk write would size every statement before serializing it.
    const updates = saves.map(({ id, name, set }) => ({ q: { _id: id, name }, u: { $set: set } }));
    const matched = await rawUpdates(this.db, this.jobs.collectionName, updates, STATEMENTS_PER_COMMAND);
    if (matched === saves.length) return saves.map(() => undefined);
    // Some job was gone (removed during its run): those saves fail, as Agenda's own would.
    const present = await this.jobs.find({ _id: { $in: saves.map((s) => s.id) } }, { projection: { _id: 1, name: 1 } }).toArray();
    const found = new Set(present.map((p) => `${String(p._id)}\0${p.name}`));
    return saves.map(({ id, name }) =>
      found.has(`${String(id)}\0${name}`)
        ? undefined
        : new Error(`job ${String(id)} (name: ${name}) cannot be updated in the database, maybe it does not exist anymore?`),
    );
  }

  /**
   * Removes finished jobs, one statement per job name for all of its ids (a statement per job cost the database a
   * query plan each, and the driver the sizing of each). One already gone (removed during its run) ends the same
   * way, so every removal succeeds.
   */
  private async removeFinished(done: StateSave[]): Promise<undefined[]> {
    const idsByName = new Map<string, ObjectId[]>();
    for (const { id, name } of done) {
      const ids = idsByName.get(name);
      if (ids) ids.push(id);
      else idsByName.set(name, [id]);
    }
    const deletes = [...idsByName].map(([name, ids]) => ({ q: { _id: ids.length === 1 ? ids[0]! : { $in: ids }, name }, limit: 0 as const }));
    await rawDeletes(this.db, this.jobs.collectionName, deletes, STATEMENTS_PER_COMMAND);
    return done.map(() => undefined);
  }
}

/** Whether a locked job is due only later: it waits in the buffer until then. */
function dueLater(job: JobParameters | undefined): boolean {
  return job?.nextRunAt !== undefined && job.nextRunAt !== null && new Date(job.nextRunAt).getTime() > Date.now();
}

function lockTimeOf(job: JobParameters): number {
  return new Date(job.lockedAt ?? 0).getTime();
}

/** Takes from a name's buffer the jobs locked so long ago that less than half of their lock lifetime is left. */
function takeAgedLocks(locks: NameLocks, lockLifetimeMs: number): string[] {
  const freshAfter = Date.now() - lockLifetimeMs / 2;
  if (locks.oldestLock >= freshAfter) return [];
  const aged: string[] = [];
  let oldest = Number.POSITIVE_INFINITY;
  locks.buffer = locks.buffer.filter((job) => {
    const lockedAt = lockTimeOf(job);
    const fresh = lockedAt >= freshAfter;
    if (fresh) oldest = Math.min(oldest, lockedAt);
    else aged.push(String(job._id));
    return fresh;
  });
  locks.oldestLock = oldest;
  return aged;
}

/** Agenda's due order (DUE_ORDER) of two locked jobs. */
function inDueOrder(a: JobParameters, b: JobParameters): number {
  return new Date(a.nextRunAt ?? 0).getTime() - new Date(b.nextRunAt ?? 0).getTime() || (b.priority ?? 0) - (a.priority ?? 0);
}

/**
 * Whether the save that ends a run leaves a one-time job with nothing more to do: unlocked, no next run, and
 * finished without failing (a failure sets failedAt and lastFinishedAt to the same moment). Agenda removes such a
 * job right after saving it when removeOnComplete is set.
 */
function finishedForGood(job: JobParameters): boolean {
  if (job.lockedAt || job.nextRunAt || !job.lastFinishedAt) return false;
  return !job.failedAt || new Date(job.failedAt).getTime() !== new Date(job.lastFinishedAt).getTime();
}

/** A job document as Agenda's repository answers it: its id as a string, absent fields undefined, not null. */
function toJobParameters(doc: Document): JobParameters {
  const job: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(doc)) job[key] = value ?? undefined;
  job._id = toJobId((doc._id as ObjectId).toHexString());
  job.nextRunAt = doc.nextRunAt ?? null;
  return job as unknown as JobParameters;
}
