// Events as they are logged, for the open event streams of this process. On a replica set ONE change stream on
// the event log, opened with the first subscription, hears every process's events and fans each out to the
// subscriptions of its project and environment; without one, the events this process logs are heard as it
// writes them (events logged by other processes then reach a stream only through its history, on resume).
import type { ChangeStream } from "mongodb";
import type { TenantScope } from "../domain/tenant-scope.ts";
import type { EventDocument, EventRepository } from "../store/event-repository.ts";

/** The live events of one stream, in the order they were logged; it ends on `close`, on the drain or on overflow. */
export interface LiveSubscription extends AsyncIterable<EventDocument> {
  close(): void;
}

export interface LiveEventsOptions {
  /** Whether the database is a replica set (change streams exist). */
  changeStreams: boolean;
  /**
   * Events one subscription may hold unread; past it the subscription ends, and its client resumes from the log
   * with the last id it saw, rather than this process holding an unbounded queue for a reader that does not read.
   */
  maxBuffered?: number;
  /** Hears of a change stream that failed for good (each subscription then ends; clients resume). */
  onError: (error: unknown) => void;
}

const DEFAULT_MAX_BUFFERED = 10_000;

class Subscription implements LiveSubscription {
  private readonly queue: EventDocument[] = [];
  private wake: (() => void) | null = null;
  private ended = false;

  constructor(
    private readonly types: ReadonlySet<string> | null,
    private readonly maxBuffered: number,
    private readonly onClose: (subscription: Subscription) => void,
  ) {}

  push(event: EventDocument): void {
    if (this.ended || (this.types !== null && !this.types.has(event.type))) return;
    if (this.queue.length >= this.maxBuffered) {
      this.close();
      return;
    }
    this.queue.push(event);
    this.wakeReader();
  }

  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.onClose(this);
    this.wakeReader();
  }

  private wakeReader(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<EventDocument> {
    try {
      for (;;) {
        const event = this.queue.shift();
        if (event !== undefined) {
          yield event;
          continue;
        }
        if (this.ended) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      this.close();
    }
  }
}

function tenantKey(projectId: string, livemode: boolean): string {
  return `${projectId}|${livemode ? "live" : "test"}`;
}

export class LiveEvents {
  private readonly byTenant = new Map<string, Set<Subscription>>();
  private readonly maxBuffered: number;
  private feed: Promise<ChangeStream<EventDocument>> | null = null;
  private draining = false;
  /** Change streams opened so far: one per process, again only after one failed. */
  feedsOpened = 0;

  constructor(
    private readonly events: EventRepository,
    private readonly options: LiveEventsOptions,
  ) {
    this.maxBuffered = options.maxBuffered ?? DEFAULT_MAX_BUFFERED;
    if (!options.changeStreams) events.onInserted((inserted) => this.dispatch(inserted));
  }

  /** Open subscriptions, all tenants together. */
  get size(): number {
    let count = 0;
    for (const set of this.byTenant.values()) count += set.size;
    return count;
  }

  /**
   * A subscription to the events of `scope` (of `types`, or all when null) logged from the moment it answers on:
   * the change stream is established by then, so a history read after it leaves no gap.
   */
  async subscribe(scope: TenantScope, types: readonly string[] | null): Promise<LiveSubscription> {
    if (this.options.changeStreams) await this.ensureFeed();
    const key = tenantKey(scope.projectId, scope.livemode);
    const subscription = new Subscription(types === null ? null : new Set(types), this.maxBuffered, (closed) => {
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

  private dispatch(events: readonly EventDocument[]): void {
    for (const event of events) {
      const set = this.byTenant.get(tenantKey(event.project_id, event.livemode));
      if (set) for (const subscription of set) subscription.push(event);
    }
  }

  private ensureFeed(): Promise<ChangeStream<EventDocument>> {
    this.feed ??= this.openFeed();
    return this.feed;
  }

  private async openFeed(): Promise<ChangeStream<EventDocument>> {
    const stream = this.events.watchInserts();
    this.feedsOpened += 1;
    try {
      // The first read opens the cursor on the server: from then on no logged event escapes it.
      const first = await stream.tryNext();
      if (first) this.dispatch([first.fullDocument]);
    } catch (error) {
      this.feed = null;
      await stream.close().catch(() => {});
      throw error;
    }
    void this.follow(stream);
    return stream;
  }

  private async follow(stream: ChangeStream<EventDocument>): Promise<void> {
    try {
      // The driver resumes by itself after a failover or a dropped connection; what ends this loop is the close.
      for await (const change of stream) {
        if (change.operationType === "insert") this.dispatch([change.fullDocument]);
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
