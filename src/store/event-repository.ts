// The event log: every event of a project and environment, kept 30 days, with the fan-out state that lets a
// relay that died half way be finished by another.
import type { ChangeStream, ChangeStreamInsertDocument, Collection, Db, Filter, Timestamp } from "mongodb";
import { changeStreamStart, insertChangeStream, isChangeStreamHistoryLost, isDuplicateKeyError, timestampAtSecond } from "./database.ts";
import { dropIndexesIfPresent } from "./earlier-indexes.ts";
import { type ListWindow, newestFirstPage, type Page } from "./list-queries.ts";
import { rawInsertsOnce } from "./write-batcher.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";

const EVENT_RETENTION_SECONDS = 30 * 24 * 60 * 60;
/**
 * How far before an event's creation time (the service's clock) its insert into the log is looked for in the change
 * stream's history (the database's clock): room for the two clocks to differ.
 */
const CLOCK_SKEW_MS = 5_000;
/**
 * How long after a resume cursor's creation the log is read for late arrivals. An event reaches the log late when its
 * request died before relaying it and the relay's sweep logs it (by default within 15 s: outboxes 10 s old, swept
 * every 5 s); this leaves room for far slower sweeps. Reading to the present instead would cost a resume after a
 * long absence a scan of all the history since. What a sweep logs later still reaches live streams, and is missed
 * only by a client that resumes from a cursor older than it.
 */
export const LATE_ARRIVAL_WINDOW_MS = 15 * 60_000;
/** Changes read per round trip: the scan stops soon after the window, at the first change past it. */
const LATE_ARRIVAL_BATCH = 16;
/** Indexes of earlier versions, replaced: the tenant's keys with time and id descending, which put each new event before all of its tenant's. */
const EARLIER_INDEXES = ["tenant_newest_first", "tenant_type_newest_first"] as const;
/** Events per insert command: an event (a transaction's or a user's representation) stays under a few KiB. */
const EVENTS_PER_COMMAND = 500;

export interface EventDocument {
  _id: string;
  project_id: string;
  livemode: boolean;
  type: string;
  created_at: Date;
  data: Record<string, unknown>;
  /** false until a delivery record exists for every matching endpoint. */
  fanned_out: boolean;
}

export class EventRepository {
  private readonly collection: Collection<EventDocument>;

  constructor(private readonly db: Db) {
    this.collection = db.collection<EventDocument>("events");
  }

  /**
   * The tenant's events in time order, alone and by type (lists read them backward, newest first; a resumed stream
   * forward). Time and id ascend, as new events do, so each is added at the end of its tenant's keys rather than
   * before all of them (cheaper for a B-tree, and for the embedded database's ordered chunks).
   */
  async ensureIndexes(): Promise<void> {
    await dropIndexesIfPresent(this.collection, EARLIER_INDEXES);
    await this.collection.createIndexes([
      { key: { project_id: 1, livemode: 1, created_at: 1, _id: 1 }, name: "tenant_by_time" },
      { key: { project_id: 1, livemode: 1, type: 1, created_at: 1, _id: 1 }, name: "tenant_type_by_time" },
      { key: { created_at: 1 }, name: "retention", expireAfterSeconds: EVENT_RETENTION_SECONDS },
      { key: { created_at: 1, _id: 1 }, name: "fan_out_pending", partialFilterExpression: { fanned_out: false } },
      // The events about one object (a transaction's timeline in the dashboard).
      { key: { "data.object.id": 1, created_at: 1 }, name: "about_object", sparse: true },
    ]);
  }

  /** Inserts the event unless it is already logged (a relay may run twice). Answers whether it was new. */
  async insertOnce(event: EventDocument): Promise<boolean> {
    try {
      await this.collection.insertOne(event);
      this.notifyInserted([event]);
      return true;
    } catch (error) {
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
  }

  /** Inserts the events not logged yet (a relay that runs twice logs each once); answers the ids logged before. */
  async insertManyOnce(events: EventDocument[]): Promise<Set<string>> {
    if (events.length === 0) return new Set();
    // A raw insert command: the driver's insertMany sizes every document before serializing it.
    const duplicates = await rawInsertsOnce(this.db, this.collection.collectionName, events, EVENTS_PER_COMMAND);
    this.notifyInserted(duplicates.size === 0 ? events : events.filter((_, i) => !duplicates.has(i)));
    return new Set([...duplicates].map((i) => events[i]!._id));
  }

  /**
   * Hears of every event this process writes for the first time (metrics count them by type; without a replica
   * set, live event streams hear of them here).
   */
  onInserted(listener: (events: readonly EventDocument[]) => void): void {
    this.insertListeners.push(listener);
  }

  private readonly insertListeners: ((events: readonly EventDocument[]) => void)[] = [];

  private notifyInserted(events: readonly EventDocument[]): void {
    if (events.length === 0) return;
    for (const listener of this.insertListeners) listener(events);
  }

  /** Every event logged from now on, by any process (a replica set's change stream). */
  watchInserts(startAtOperationTime: Timestamp): ChangeStream<EventDocument, ChangeStreamInsertDocument<EventDocument>> {
    return insertChangeStream(this.collection, startAtOperationTime);
  }

  /** Where a change stream of inserts starts so as to miss nothing logged after this answer (database.ts). */
  changeStreamStart(): Promise<Timestamp> {
    return changeStreamStart(this.db, "events");
  }

  /**
   * Oldest first, the events logged after `after` in the log's order (creation time, then id), of the given types
   * (all when null): the history a resumed event stream sends before its live events.
   */
  listAfter(
    scope: TenantScope,
    after: Pick<EventDocument, "_id" | "created_at">,
    types: readonly string[] | null,
    limit: number,
  ): Promise<EventDocument[]> {
    const filter: Filter<EventDocument> = {
      project_id: scope.projectId,
      livemode: scope.livemode,
      $or: [{ created_at: { $gt: after.created_at } }, { created_at: after.created_at, _id: { $gt: after._id } }],
    };
    if (types !== null) filter.type = { $in: [...types] };
    return this.collection.find(filter).sort({ created_at: 1, _id: 1 }).limit(limit).toArray();
  }

  /**
   * The events of `scope` (of `types`, all when null) that sort before `after` in the log's order (creation time,
   * then id) yet reached the log after it, in the order they reached it: those a resume's `listAfter` cannot find.
   * Events created at nearly the same moment by concurrent calls can be logged in either order, and an event whose
   * process died before relaying it is logged by the sweeper later, with its own creation time. Read from the
   * change stream's history (a replica set's), from just before `after` was created to `windowMs` after that
   * (LATE_ARRIVAL_WINDOW_MS); null when that history no longer reaches back to `after`'s insert, or that insert came
   * later than the window, so that what came after it cannot be told.
   */
  async lateArrivals(
    scope: TenantScope,
    after: EventDocument,
    types: readonly string[] | null,
    windowMs = LATE_ARRIVAL_WINDOW_MS,
  ): Promise<EventDocument[] | null> {
    const sortsBefore = {
      $or: [
        { "fullDocument.created_at": { $lt: after.created_at } },
        { "fullDocument.created_at": after.created_at, "fullDocument._id": { $lt: after._id } },
      ],
    };
    const ofScope = {
      "fullDocument.project_id": scope.projectId,
      "fullDocument.livemode": scope.livemode,
      ...(types === null ? {} : { "fullDocument.type": { $in: [...types] } }),
    };
    // Any change of the log past the window (one is made every few moments while events are logged) is the mark to
    // stop at, so the history after it is not read.
    const windowEnd = new Date(after.created_at.getTime() + windowMs);
    const pipeline = [
      {
        $match: {
          $or: [
            { operationType: "insert", "documentKey._id": after._id },
            { operationType: "insert", $and: [ofScope, sortsBefore] },
            { wallTime: { $gt: windowEnd } },
          ],
        },
      },
    ];
    const stream = this.collection.watch<EventDocument, ChangeStreamInsertDocument<EventDocument>>(pipeline, {
      startAtOperationTime: timestampAtSecond(new Date(after.created_at.getTime() - CLOCK_SKEW_MS)),
      // Read to the end of the history, not waited on for what comes next (live subscriptions hear that).
      maxAwaitTimeMS: 1,
      batchSize: LATE_ARRIVAL_BATCH,
    });
    try {
      let found = false;
      const late: EventDocument[] = [];
      for (let change = await stream.tryNext(); change !== null; change = await stream.tryNext()) {
        if (change.wallTime !== undefined && change.wallTime > windowEnd) break;
        if (found) late.push(change.fullDocument);
        else found = change.documentKey._id === after._id;
      }
      return found ? late : null;
    } catch (error) {
      if (isChangeStreamHistoryLost(error)) return null;
      throw error;
    } finally {
      await stream.close();
    }
  }

  find(scope: TenantScope, id: string): Promise<EventDocument | null> {
    return this.collection.findOne({ _id: id, project_id: scope.projectId, livemode: scope.livemode });
  }

  findById(id: string): Promise<EventDocument | null> {
    return this.collection.findOne({ _id: id });
  }

  /** The events of these ids that exist, in no particular order. */
  findManyById(ids: readonly string[]): Promise<EventDocument[]> {
    return this.collection.find({ _id: { $in: [...ids] } }).toArray();
  }

  async markFannedOut(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.collection.updateMany({ _id: { $in: ids }, fanned_out: false }, { $set: { fanned_out: true } });
  }

  findNotFannedOut(before: Date, limit: number): Promise<EventDocument[]> {
    return this.collection
      .find({ fanned_out: false, created_at: { $lte: before } })
      .sort({ created_at: 1 })
      .limit(limit)
      .toArray();
  }

  /** Newest first, within the window (docs/contract.md, Lists). */
  async list(scope: TenantScope, options: ListWindow<EventDocument> & { type?: string }): Promise<Page<EventDocument>> {
    const filter: Filter<EventDocument> = { project_id: scope.projectId, livemode: scope.livemode };
    if (options.type !== undefined) filter.type = options.type;
    return newestFirstPage(this.collection, filter, options);
  }
}
