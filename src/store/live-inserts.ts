// Documents of a collection as they are inserted, for the open streams of this process (the event log's events,
// the request log's entries). On a replica set ONE change stream on the collection, opened with the first
// subscription, hears every process's inserts and fans each out to the subscriptions of its project and
// environment; without one, the documents this process inserts are heard as it writes them (those of other
// processes then reach a stream only through its history, on resume).
import type { ChangeStream, ChangeStreamInsertDocument, Document, Timestamp } from "mongodb";
import { svcError } from "../domain/errors.ts";
import { DEFAULT_MAX_STREAM_BACKLOG } from "../domain/limits.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";

/** A document of one project and environment. */
export interface TenantDocument {
  _id: string;
  project_id: string;
  livemode: boolean;
}

/** The collection a feed follows: its insert change stream, and its own inserts as this process writes them. */
export interface InsertSource<T extends Document> {
  /** The time after which nothing logged escapes a change stream started there (store/database.ts). */
  changeStreamStart(): Promise<Timestamp>;
  watchInserts(startAtOperationTime: Timestamp): ChangeStream<T, ChangeStreamInsertDocument<T>>;
  onInserted(listener: (inserted: readonly T[]) => void): void;
}

/**
 * The live documents of one stream, in the order they were written; it ends on `close` and on the drain, and fails
 * with `stream_fell_behind` when its reader falls too far behind (the documents it held dropped). Read one by one
 * (as an async iterable) or several at a time (`read`).
 */
export interface LiveSubscription<T> extends AsyncIterable<T> {
  close(): void;
  /**
   * The documents waiting, at least one (waited for), at most `max`; null once the subscription has ended. The
   * documents of one write reach every subscription of their tenant as one array, handed on as it is when it is
   * all that waits and fits: the streams that read them together send the same array.
   */
  read(max: number): Promise<readonly T[] | null>;
}

export interface LiveInsertsOptions {
  /** Whether the database is a replica set (change streams exist). */
  changeStreams: boolean;
  /**
   * Documents one subscription may hold unread (DEFAULT_MAX_STREAM_BACKLOG unless set); past it the subscription
   * drops them and fails, and its client resumes from the log with the last id it saw, rather than this process
   * holding an unbounded queue for a reader that does not read. A slow reader holds up no other: every subscription
   * has its own queue.
   */
  maxBuffered?: number;
  /** Hears of a change stream that failed for good (each subscription then ends; clients resume). */
  onError: (error: unknown) => void;
}

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };
/** Read arrays a queue may keep before it drops them while its reader is still behind. */
const COMPACT_AFTER = 1024;

/**
 * One subscription's queue, read as its own async iterator or by `read`: what is already queued is handed over at
 * once, without the promise chain of an async generator, as every message of every stream passes here. The queue
 * holds the arrays it was pushed (one write's documents, shared by every subscription of the tenant), not a copy of
 * their documents. A reader waiting for documents gets them straight from `push`, its promise settled with them (not
 * woken to read again, which took three more promise turns a message).
 */
class Subscription<T> implements LiveSubscription<T>, AsyncIterator<T> {
  /** The arrays pushed and not yet read, from `head`; the first read from `offset`. */
  private chunks: (readonly T[])[] = [];
  private head = 0;
  private offset = 0;
  /** Documents queued unread. */
  private buffered = 0;
  /** The reader waiting for documents (the queue is empty while it waits), and how many it takes: 0 for `next`. */
  private waiting: ((read: unknown) => void) | null = null;
  private waitingMax = 0;
  private ended = false;
  private fellBehind = false;
  /** A read's promise made waiting: one function for every read, not a closure made per read. */
  private readonly wait = (resolve: (read: never) => void) => {
    this.waiting = resolve as (read: unknown) => void;
  };

  constructor(
    private readonly accepts: ((document: T) => boolean) | null,
    private readonly maxBuffered: number,
    private readonly onClose: (subscription: Subscription<T>) => void,
  ) {}

  /** One write's documents of this subscription's tenant, in order; the array is the same for all and not changed. */
  push(documents: readonly T[]): void {
    if (this.ended) return;
    const accepted = this.accepts === null ? documents : documents.filter(this.accepts);
    if (accepted.length === 0) return;
    const waiting = this.waiting;
    let taken = 0;
    if (waiting !== null) {
      this.waiting = null;
      if (this.waitingMax === 0) {
        taken = 1;
        waiting({ done: false, value: accepted[0] });
      } else {
        taken = Math.min(this.waitingMax, accepted.length);
        waiting(taken === accepted.length ? accepted : accepted.slice(0, taken));
      }
      if (taken === accepted.length) return;
    }
    if (this.buffered + accepted.length - taken > this.maxBuffered) {
      // Cut off: what it held is dropped at once (its client reads it again from the log when it resumes), and its
      // reader's next read fails.
      this.fellBehind = true;
      this.drop();
      this.close();
      return;
    }
    // A reader waited: the queue was empty, and the rest of the array is read from where it stopped.
    if (taken > 0) this.offset = taken;
    this.chunks.push(accepted);
    this.buffered += accepted.length - taken;
  }

  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.onClose(this);
    const waiting = this.waiting;
    this.waiting = null;
    // Its reader reads the end (or the failure) as its next read would.
    waiting?.(this.waitingMax === 0 ? this.next() : this.read(this.waitingMax));
  }

  next(): Promise<IteratorResult<T>> {
    if (this.buffered > 0) {
      const chunk = this.chunks[this.head]!;
      const value = chunk[this.offset]!;
      this.offset += 1;
      this.buffered -= 1;
      if (this.offset === chunk.length) this.shift();
      return Promise.resolve({ done: false, value });
    }
    if (this.ended) return this.ending(DONE);
    this.waitingMax = 0;
    return new Promise(this.wait);
  }

  read(max: number): Promise<readonly T[] | null> {
    if (this.buffered > 0) return Promise.resolve(this.take(Math.max(1, max)));
    if (this.ended) return this.ending(null);
    this.waitingMax = Math.max(1, max);
    return new Promise(this.wait);
  }

  return(): Promise<IteratorResult<T>> {
    this.close();
    this.drop();
    return Promise.resolve(DONE);
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return this;
  }

  /** Up to `max` queued documents (at least one is): the first array itself when it is all that waits and fits. */
  private take(max: number): readonly T[] {
    const chunk = this.chunks[this.head]!;
    if (this.offset === 0 && chunk.length <= max && (chunk.length === this.buffered || chunk.length === max)) {
      this.buffered -= chunk.length;
      this.shift();
      return chunk;
    }
    const taken: T[] = [];
    while (taken.length < max && this.buffered > 0) {
      const from = this.chunks[this.head]!;
      const end = Math.min(from.length, this.offset + max - taken.length);
      for (let i = this.offset; i < end; i++) taken.push(from[i]!);
      this.buffered -= end - this.offset;
      this.offset = end;
      if (end === from.length) this.shift();
    }
    return taken;
  }

  /** The first array is read: the next is read from its start; read arrays are dropped as the queue empties. */
  private shift(): void {
    this.offset = 0;
    this.head += 1;
    if (this.head === this.chunks.length) {
      this.chunks = [];
      this.head = 0;
    } else if (this.head >= COMPACT_AFTER && this.head * 2 >= this.chunks.length) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
  }

  private drop(): void {
    this.chunks = [];
    this.head = 0;
    this.offset = 0;
    this.buffered = 0;
  }

  /** A read after the end: the failure, once, when it fell behind; else the end. */
  private ending<R>(end: R): Promise<R> {
    if (!this.fellBehind) return Promise.resolve(end);
    this.fellBehind = false;
    return Promise.reject(
      svcError(
        "stream_fell_behind",
        `The stream's reader fell ${this.maxBuffered} messages behind; open it again (an event stream with starting_after set to the last event received, to miss none).`,
      ),
    );
  }
}

function tenantKey(projectId: string, livemode: boolean): string {
  return `${projectId}|${livemode ? "live" : "test"}`;
}

/** The feed of one collection; `F` is what a subscription filters by (event types), made a test by `matcher`. */
export class LiveInserts<T extends TenantDocument, F> {
  private readonly byTenant = new Map<string, Set<Subscription<T>>>();
  private readonly maxBuffered: number;
  private feed: Promise<ChangeStream<T, ChangeStreamInsertDocument<T>>> | null = null;
  private draining = false;
  /** Change streams opened so far: one per process, again only after one failed. */
  feedsOpened = 0;

  constructor(
    private readonly source: InsertSource<T>,
    private readonly matcher: (filter: F) => (document: T) => boolean,
    private readonly options: LiveInsertsOptions,
  ) {
    this.maxBuffered = options.maxBuffered ?? DEFAULT_MAX_STREAM_BACKLOG;
    if (!options.changeStreams) source.onInserted((inserted) => this.dispatch(inserted));
  }

  /** Open subscriptions, all tenants together. */
  get size(): number {
    let count = 0;
    for (const set of this.byTenant.values()) count += set.size;
    return count;
  }

  /**
   * A subscription to the documents of `scope` (those `filter` accepts, or all when null) written from the moment
   * it answers on: its change stream starts at a time read by then, so a history read after it leaves no gap.
   */
  async subscribe(scope: TenantScope, filter: F | null): Promise<LiveSubscription<T>> {
    if (this.options.changeStreams) await this.ensureFeed();
    const key = tenantKey(scope.projectId, scope.livemode);
    const subscription = new Subscription<T>(filter === null ? null : this.matcher(filter), this.maxBuffered, (closed) => {
      const set = this.byTenant.get(key);
      set?.delete(closed);
      if (set?.size === 0) this.byTenant.delete(key);
    });
    if (this.draining) {
      subscription.close();
      return subscription;
    }
    let set = this.byTenant.get(key);
    if (!set) this.byTenant.set(key, (set = new Set()));
    set.add(subscription);
    return subscription;
  }

  /** The process is stopping: every subscription ends (its stream ends cleanly, its client resumes elsewhere). */
  async drain(): Promise<void> {
    this.draining = true;
    this.endAll();
    const feed = this.feed;
    this.feed = null;
    if (feed) await (await feed.catch(() => null))?.close();
  }

  private endAll(): void {
    for (const set of [...this.byTenant.values()]) for (const subscription of [...set]) subscription.close();
  }

  /** Every subscription of a tenant is handed the same array, that tenant's documents of the write in order. */
  private dispatch(documents: readonly T[]): void {
    if (this.byTenant.size === 0) return;
    const byTenant = new Map<string, T[]>();
    for (const document of documents) {
      const key = tenantKey(document.project_id, document.livemode);
      if (!this.byTenant.has(key)) continue;
      const own = byTenant.get(key);
      if (own === undefined) byTenant.set(key, [document]);
      else own.push(document);
    }
    for (const [key, own] of byTenant) {
      const set = this.byTenant.get(key);
      if (set) for (const subscription of set) subscription.push(own);
    }
  }

  private ensureFeed(): Promise<ChangeStream<T, ChangeStreamInsertDocument<T>>> {
    this.feed ??= this.openFeed();
    return this.feed;
  }

  private async openFeed(): Promise<ChangeStream<T, ChangeStreamInsertDocument<T>>> {
    // Started at a time, not at whenever its cursor opens: the subscription can answer after one read of that
    // time instead of after the cursor's first getMore (which waits up to a second for a change that may not come).
    let startAt: Timestamp;
    try {
      startAt = await this.source.changeStreamStart();
    } catch (error) {
      this.feed = null;
      throw error;
    }
    const stream = this.source.watchInserts(startAt);
    this.feedsOpened += 1;
    void this.follow(stream);
    return stream;
  }

  private async follow(stream: ChangeStream<T, ChangeStreamInsertDocument<T>>): Promise<void> {
    try {
      // The driver resumes by itself after a failover or a dropped connection; what ends this loop is the close.
      // A getMore's batch is handed out whole once its last change is read: a subscription then finds the events
      // logged together waiting together (a batching stream sends them in one message), instead of being woken
      // for each while the driver hands the rest over.
      const batch: T[] = [];
      for await (const change of stream) {
        if (change.operationType === "insert") batch.push(change.fullDocument);
        if (stream.bufferedCount() === 0) this.dispatch(batch.splice(0));
      }
    } catch (error) {
      if (!stream.closed) this.options.onError(error);
    }
    // A feed that ended without the drain: its subscriptions end, their clients resume from the log, and the
    // next subscription opens a new feed.
    if (this.feed !== null && (await this.feed.catch(() => null)) === stream) this.feed = null;
    await stream.close().catch(() => {});
    this.endAll();
  }
}
