// The records of fan-out's first attempts, held until their outcomes: a record is then written once, finished, where
// it was inserted pending and updated with its outcome (one write of a delivery where there were two: half the
// database's work per delivery, and of its garbage). What a held record would have guarded, its guarantee job
// covers: the relay logged its event first (a relay that runs again records its deliveries without sending them at
// once), and the batch's job, written before fan-out returns, records whatever is missing once the lease is over.
//
// A record whose outcome has not come within `visibleWithinMs` (a slow receiver, a long queue of attempts) is
// written as fan-out built it, pending with its attempt leased, so that the API shows it; its outcome then updates
// it. One timer per fan-out batch, not per delivery.
import type { WebhookDeliveryDocument, WebhookDeliveryRepository } from "../store/webhook-delivery-repository.ts";

/** How long a first attempt's record may wait for its outcome before it is written pending. */
export const DEFAULT_VISIBLE_WITHIN_MS = 2000;

interface HeldBatch {
  /** Records of the batch still held (their outcomes not come). */
  readonly held: Map<string, WebhookDeliveryDocument>;
  readonly timer: NodeJS.Timeout;
  /** Set once the timer fired: settles when the records still held then are written. */
  written?: Promise<void>;
}

export class HeldRecords {
  private readonly batchOf = new Map<string, HeldBatch>();
  private readonly batches = new Set<HeldBatch>();
  /** Records held, not written yet, by event (their events' ids are the strings fan-out read, hashed once). */
  private readonly heldOfEvent = new Map<string, number>();

  constructor(
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly onError: (error: unknown) => void,
    private readonly visibleWithinMs = DEFAULT_VISIBLE_WITHIN_MS,
  ) {}

  /** Holds a fan-out batch's records of first attempts. */
  hold(records: readonly WebhookDeliveryDocument[]): void {
    if (records.length === 0) return;
    const batch: HeldBatch = {
      held: new Map(records.map((record) => [record._id, record])),
      timer: setTimeout(() => this.writePending(batch), this.visibleWithinMs),
    };
    this.batches.add(batch);
    for (const record of records) {
      this.batchOf.set(record._id, batch);
      this.heldOfEvent.set(record.event_id, (this.heldOfEvent.get(record.event_id) ?? 0) + 1);
    }
  }

  /**
   * Whether this process holds records of this event, to be written with their outcomes: a relay of the event that
   * runs again here (the user's outbox relayed by a later write) leaves its deliveries be. Fan-out holds all of an
   * event's first attempts at once, so one held means the event's deliveries are under way here.
   */
  holds(eventId: string): boolean {
    return this.heldOfEvent.has(eventId);
  }

  /**
   * The outcome of `id`'s first attempt is being recorded: answers its record to insert with it, or null when it is
   * written already (pending; a promise of null, settled once that write has) or was never held, and the outcome is
   * an update. A record answered is still held for `holds` until `written` says its insert has settled. Not an async
   * function: the outcome of every first attempt asks, and most are answered at once.
   */
  release(id: string): WebhookDeliveryDocument | Promise<null> | null {
    const batch = this.batchOf.get(id);
    if (batch === undefined) return null;
    this.batchOf.delete(id);
    if (batch.written !== undefined) return batch.written.then(() => null);
    const record = batch.held.get(id)!;
    batch.held.delete(id);
    if (batch.held.size === 0) this.end(batch);
    return record;
  }

  /** The insert of a record `release` answered has settled (written, or refused: another was there first). */
  written(record: WebhookDeliveryDocument): void {
    this.forget(record);
  }

  /** Writes no more: records still held are left to their batches' guarantee jobs. */
  stop(): void {
    for (const batch of this.batches) this.end(batch);
    this.batchOf.clear();
    this.heldOfEvent.clear();
  }

  private writePending(batch: HeldBatch): void {
    this.batches.delete(batch);
    const records = [...batch.held.values()];
    batch.held.clear();
    for (const record of records) this.forget(record);
    // A record another relay wrote first is left as it is: this attempt's outcome then finds nothing to update.
    batch.written = this.deliveries.insertManyOnce(records).then(
      () => undefined,
      (error: unknown) => this.onError(error),
    );
    void batch.written.then(() => {
      for (const record of records) if (this.batchOf.get(record._id) === batch) this.batchOf.delete(record._id);
    });
  }

  private forget(record: WebhookDeliveryDocument): void {
    const left = (this.heldOfEvent.get(record.event_id) ?? 1) - 1;
    if (left > 0) this.heldOfEvent.set(record.event_id, left);
    else this.heldOfEvent.delete(record.event_id);
  }

  private end(batch: HeldBatch): void {
    clearTimeout(batch.timer);
    this.batches.delete(batch);
  }
}
