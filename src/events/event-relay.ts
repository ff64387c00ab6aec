// Moves events from their source documents' outboxes to the event log and fans them out. Requests that relay
// at the same moment share one batch of database writes; a sweeper finishes whatever a crash interrupted.
import type { Clock } from "../domain/clock.ts";
import type { EventDocument, EventRepository } from "../store/event-repository.ts";
import type { UserDocument } from "../store/user-document.ts";
import type { UserRepository } from "../store/user-repository.ts";
import { loggedFromOutbox } from "./event-factory.ts";
import type { EventFanout } from "./event-fanout.ts";

interface PendingRelay {
  userId: string | null;
  event: EventDocument;
  /** Whether the relay removes it from its user's outbox (false: the caller's next write of the user does). */
  removes: boolean;
}

export class EventRelay {
  private queue: { items: PendingRelay[]; settle: (error?: unknown) => void }[] = [];
  private draining = false;

  constructor(
    private readonly events: EventRepository,
    private readonly users: UserRepository,
    private readonly fanout: EventFanout,
    private readonly clock: Clock,
  ) {}

  /** Relays the outbox of a user just written; resolves once its events are logged and fanned out. */
  relayUserOutbox(user: Pick<UserDocument, "_id" | "project_id" | "livemode" | "outbox">): Promise<void> {
    return this.enqueue(user.outbox.map((event) => ({ userId: user._id, event: loggedFromOutbox(user, event), removes: true })));
  }

  /**
   * Logs and fans out the outbox of a user just written like `relayUserOutbox`, but leaves the events in the
   * outbox: the caller removes them, once this has resolved, in a write of the user it makes anyway (the ledger's
   * compaction of a settled transaction), rather than the user being written once more for them.
   */
  logUserOutbox(user: Pick<UserDocument, "_id" | "project_id" | "livemode" | "outbox">): Promise<void> {
    return this.enqueue(user.outbox.map((event) => ({ userId: user._id, event: loggedFromOutbox(user, event), removes: false })));
  }

  /** Logs and fans out an event that has no source document (for example one published by another service). */
  publish(event: EventDocument): Promise<void> {
    return this.enqueue([{ userId: null, event, removes: false }]);
  }

  /**
   * Group commit: one batch is written at a time, and everything queued meanwhile goes into the next, so
   * concurrent requests share a few writes instead of each making its own.
   */
  private enqueue(items: PendingRelay[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ items, settle: (error) => (error === undefined ? resolve() : reject(error)) });
      if (!this.draining) {
        this.draining = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      let failure: unknown;
      try {
        await this.relayBatch(batch.flatMap((entry) => entry.items));
      } catch (error) {
        failure = error ?? new Error("relay failed");
      }
      for (const entry of batch) entry.settle(failure);
    }
    this.draining = false;
  }

  /**
   * Events are logged before their deliveries exist, so a worker never holds a delivery whose event it cannot
   * read. An event from an outbox is logged as fanned out: its outbox entry, removed last, is what says its
   * fan-out may be unfinished, and a crash anywhere only means the sweeper does it again. An event without an
   * outbox is logged unfinished and marked once fanned out, so the log itself remembers. Logging is also what
   * tells a first relay from one that runs again: only the relay that logs an event sends its first attempts.
   */
  private async relayBatch(batch: PendingRelay[]): Promise<void> {
    if (batch.length === 0) return;
    const fromOutbox = batch.filter((item) => item.userId !== null).map((item) => item.event);
    const standalone = batch.filter((item) => item.userId === null).map((item) => item.event);
    const unfinished = standalone.filter((e) => !e.fanned_out);
    const loggedBefore = await this.events.insertManyOnce([...standalone, ...fromOutbox.map((event) => ({ ...event, fanned_out: true }))]);
    await this.fanout.fanOut([...fromOutbox, ...unfinished], loggedBefore);
    await this.events.markFannedOut(unfinished.map((e) => e._id));
    const byUser = new Map<string, string[]>();
    for (const { userId, event, removes } of batch) {
      if (userId !== null && removes) byUser.set(userId, [...(byUser.get(userId) ?? []), event._id]);
    }
    await this.users.removeFromOutboxes(byUser);
  }

  /**
   * Finishes relays older than `staleAfterMs` that no request finished: outboxes whose request died, and
   * events logged but not fanned out.
   */
  async sweep(staleAfterMs: number, batchSize = 500): Promise<number> {
    const before = new Date(this.clock().getTime() - staleAfterMs);
    const users = await this.users.findWithStaleOutbox(before, batchSize);
    const pending: PendingRelay[] = users.flatMap((user) =>
      user.outbox
        .filter((event) => event.created_at <= before)
        .map((event) => ({ userId: user._id, event: loggedFromOutbox(user, event), removes: true })),
    );
    const unfinished = await this.events.findNotFannedOut(before, batchSize);
    pending.push(...unfinished.map((event) => ({ userId: null, event, removes: false })));
    if (pending.length > 0) await this.relayBatch(pending);
    return pending.length;
  }
}
