// Deliveries: one record per (event, endpoint), the history of its attempts. The run of the delivery's job claims
// each attempt with a conditional update, so two runs (or processes) never send the same attempt twice, and the
// attempt number comes from the record, so an attempt cut short by a crash still counts. When attempts run is
// the job's `nextRunAt` alone.
import type { Collection, Db, Filter } from "mongodb";
import { DELIVERY_ATTEMPTS_KEPT } from "../domain/limits.ts";
import { newUuid } from "../domain/random.ts";
import { dropIndexesIfPresent } from "./earlier-indexes.ts";
import { type ListWindow, newestFirstPage, type Page } from "./list-queries.ts";
import { rawInsertsOnce, rawUpdates } from "./write-batcher.ts";

export type DeliveryStatus = "pending" | "succeeded" | "failed";

export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ["pending", "succeeded", "failed"];

/**
 * An attempt's headers as stored: one string, the header block as HTTP/1.1 writes it, a `name: value` line each (a
 * name never holds a ":", a value never a line break: HTTP's parser and Node's writer refuse both). Not a document of
 * fields (a header name may hold a "." or start with "$", which a field name may not), nor the name and value pairs
 * records written before held (`{name, value}[]`, still read): a pair is an object and two strings for the database
 * to decode and keep, some fifteen per attempt, where the block is one string.
 */
export type StoredHeaders = string | { name: string; value: string }[];

/** Headers as an attempt's record stores them. */
export function storedHeaders(headers: Record<string, string>): string {
  let block = "";
  for (const name in headers) {
    const value = headers[name]!;
    // Never so in HTTP; a line break would otherwise start a header of its own when read back.
    block += `${name}: ${value.includes("\n") ? value.replaceAll(/[\r\n]/g, " ") : value}\n`;
  }
  return block;
}

/** The headers a record stores, as names and values (from either form). */
export function headersOf(stored: StoredHeaders): Record<string, string> {
  if (typeof stored !== "string") return Object.fromEntries(stored.map(({ name, value }) => [name, value]));
  // Entries, then an object of them: a receiver's header may be named "__proto__", which an assignment would drop.
  const entries: [string, string][] = [];
  for (let start = 0; start < stored.length; ) {
    const end = stored.indexOf("\n", start);
    const colon = stored.indexOf(": ", start);
    entries.push([stored.slice(start, colon), stored.slice(colon + 2, end)]);
    start = end + 1;
  }
  return Object.fromEntries(entries);
}

/** An attempt's request as sent (its body cut to a bounded prefix). */
export interface AttemptRequestRecord {
  url: string;
  headers: StoredHeaders;
  body: string;
  body_truncated: boolean;
}

/** The receiver's answer to an attempt (its body cut to 4 KiB). */
export interface AttemptResponseRecord {
  headers: StoredHeaders;
  body: string;
  body_truncated: boolean;
}

export interface DeliveryAttemptRecord {
  attempted_at: Date;
  /** Null when the receiver did not answer. */
  response_status: number | null;
  /** Null on success; otherwise an attempt error code (http_<status>, timeout, ..., queue_full, endpoint_disabled). */
  error: string | null;
  duration_ms: number;
  /** Null (or absent, in records older than requests being kept) when no request was made. */
  request?: AttemptRequestRecord | null;
  /** Null (or absent) when the receiver did not answer. */
  response?: AttemptResponseRecord | null;
}

export interface WebhookDeliveryDocument {
  _id: string;
  project_id: string;
  livemode: boolean;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  /** Attempts of the current cycle, the one in flight included. */
  attempt_count: number;
  /**
   * Null once settled. Shown to the API as the next attempt's time: the same time as the delivery's job's
   * `nextRunAt`, which alone decides when the attempt runs; never read as a schedule.
   */
  next_attempt_at: Date | null;
  /**
   * As stored, the last attempt's outcome without its request and response when it is the last of `attempts`
   * (they are kept once, there); the repository's reads answer it in full.
   */
  last_attempt: DeliveryAttemptRecord | null;
  /** The latest DELIVERY_ATTEMPTS_KEPT attempts, oldest first, `last_attempt` last; absent in records older than the history. */
  attempts?: DeliveryAttemptRecord[];
  /** Set while a worker holds the attempt in flight; another worker may take it over once it has passed. */
  lease_until: Date | null;
  /** Which claim of many at once took the last attempt (`claimUnleasedAttempts`); absent until one did. */
  lease_token?: string;
  created_at: Date;
  updated_at: Date;
}

/** What an attempt's outcome writes: the attempt goes into the history, and is `last_attempt` as its outcome alone. */
export interface AttemptOutcome {
  status: DeliveryStatus;
  next_attempt_at: Date | null;
  attempt: DeliveryAttemptRecord;
  /**
   * For a record older than the history (no `attempts`, see `legacyHistory`): what its history starts with. The
   * history is then written whole; otherwise the attempt is appended to it.
   */
  legacyHistory?: DeliveryAttemptRecord[];
}

/** An outcome to record: of the delivery `id`'s attempt `attempt`, written at `now`. */
export interface OutcomeWrite {
  id: string;
  attempt: number;
  outcome: AttemptOutcome;
  now: Date;
  /**
   * The delivery's record as fan-out built it, not written yet (a first attempt's, held until its outcome): it is
   * inserted with the outcome, in place of an update.
   */
  held?: WebhookDeliveryDocument;
}

/**
 * What a claim answers of a record: all but the requests and responses of its earlier attempts, which an attempt
 * never reads (its outcome is appended to the history), so that a retry's claim does not carry them back.
 */
const CLAIMED_FIELDS = { "attempts.request": 0, "attempts.response": 0 } as const;

/**
 * Outcomes written by one `update` command at most: an outcome carries at most a 64 KiB request body, a 4 KiB
 * response body and their headers (under 100 KiB), so 128 of them stay under the 16 MiB of a command.
 */
const OUTCOMES_PER_COMMAND = 128;

/** New delivery records written by one `insert` command at most: a record without attempts is under 2 KiB. */
const RECORDS_PER_COMMAND = 1000;

const IN_TIME_ORDER = { created_at: 1, _id: 1 } as const;
const ENDPOINT_BY_TIME = "endpoint_by_time";
const NOT_SUCCEEDED = "not_succeeded_by_status";
/**
 * Pending and failed deliveries: the statuses that sort before "succeeded" (a range, which every MongoDB version
 * takes in a partial filter, where a set of values is taken by recent ones alone).
 */
const NOT_SUCCEEDED_FILTER = { status: { $lt: "succeeded" } } as const;

/**
 * Indexes of earlier versions, replaced: the endpoint's deliveries newest first, with or without their status
 * (every delivery in each; a new key went before all of its endpoint's), and the pending deliveries by next attempt.
 */
const EARLIER_INDEXES = ["endpoint_newest_first", "endpoint_status_newest_first", "due"] as const;

export class WebhookDeliveryRepository {
  private readonly collection: Collection<WebhookDeliveryDocument>;

  constructor(private readonly db: Db) {
    this.collection = db.collection<WebhookDeliveryDocument>("webhook_deliveries");
  }

  /**
   * Every delivery's record is written into each index twice (its insert, its outcome), so there are few: the one
   * per (event, endpoint) that keeps fan-out idempotent, an endpoint's deliveries in time order (its list, read
   * backwards for newest first; a new key goes to the end of its endpoint's keys, where an insert costs least), and
   * the deliveries not succeeded by status (a pending or failed list, the pending counts, recovery's failed ones).
   * A delivery leaves that last index when it succeeds, so most deliveries are in it only while in flight; a
   * succeeded list reads the endpoint's index, past the others (few, when most succeed).
   */
  async ensureIndexes(): Promise<void> {
    await dropIndexesIfPresent(this.collection, EARLIER_INDEXES);
    await this.collection.createIndexes([
      { key: { event_id: 1, endpoint_id: 1 }, name: "one_per_event_and_endpoint", unique: true },
      { key: { endpoint_id: 1, ...IN_TIME_ORDER }, name: ENDPOINT_BY_TIME },
      { key: { status: 1, endpoint_id: 1, ...IN_TIME_ORDER }, name: NOT_SUCCEEDED, partialFilterExpression: NOT_SUCCEEDED_FILTER },
    ]);
  }

  /** Every pending delivery's id and next attempt time, in batches of `size` (through the index of those not succeeded). */
  async *pendingSchedules(size: number): AsyncGenerator<{ _id: string; next_attempt_at: Date | null }[]> {
    const cursor = this.collection
      .find({ status: "pending" }, { projection: { _id: 1, next_attempt_at: 1 }, batchSize: size })
      .map((d) => ({ _id: d._id, next_attempt_at: d.next_attempt_at }));
    let batch: { _id: string; next_attempt_at: Date | null }[] = [];
    for await (const delivery of cursor) {
      batch.push(delivery);
      if (batch.length === size) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }

  /** Inserts the deliveries that do not exist yet; answers the ids it inserted (a fan-out may run twice). */
  async insertManyOnce(deliveries: WebhookDeliveryDocument[]): Promise<Set<string>> {
    if (deliveries.length === 0) return new Set();
    const duplicates = await rawInsertsOnce(this.db, this.collection.collectionName, deliveries, RECORDS_PER_COMMAND);
    return new Set(deliveries.filter((_, i) => !duplicates.has(i)).map((d) => d._id));
  }

  /** The pending deliveries of these events (a fan-out that runs again finds the records of the first run). */
  findPendingOfEvents(eventIds: readonly string[]): Promise<WebhookDeliveryDocument[]> {
    return this.collection.find({ event_id: { $in: [...eventIds] }, status: "pending" }).toArray();
  }

  /** Pending deliveries of an endpoint, counted up to `cap` (enough to tell whether its queue is full). */
  countPending(endpointId: string, cap: number): Promise<number> {
    return this.collection.countDocuments({ endpoint_id: endpointId, status: "pending" }, { limit: cap });
  }

  /** Pending deliveries across every endpoint (the pending-deliveries gauge), from the index of those not succeeded. */
  countAllPending(): Promise<number> {
    return this.collection.countDocuments({ status: "pending" });
  }

  async find(endpointId: string, id: string): Promise<WebhookDeliveryDocument | null> {
    return withLastAttemptInFull(await this.collection.findOne({ _id: id, endpoint_id: endpointId }));
  }

  async findById(id: string): Promise<WebhookDeliveryDocument | null> {
    return withLastAttemptInFull(await this.collection.findOne({ _id: id }));
  }

  /** Newest first, optionally in one status, within the window (docs/contract.md, Lists). */
  async list(endpointId: string, options: ListWindow<WebhookDeliveryDocument> & { status?: DeliveryStatus }): Promise<Page<WebhookDeliveryDocument>> {
    const filter: Filter<WebhookDeliveryDocument> = { endpoint_id: endpointId };
    if (options.status !== undefined) filter.status = options.status;
    const page = await newestFirstPage(this.collection, filter, options);
    for (const delivery of page.items) withLastAttemptInFull(delivery);
    return page;
  }

  /**
   * Claims attempt `attempt + 1` of a pending delivery whose attempt `attempt` is not in flight (never leased, or
   * its lease ran out): counts it and leases it until `leaseUntil`. Answers the delivery with its new attempt
   * number, or null when it moved on meanwhile (settled, replayed, claimed by another run). When attempts run is
   * the job's business (its `nextRunAt`), not the record's.
   */
  claimAttempt(id: string, attempt: number, now: Date, leaseUntil: Date): Promise<WebhookDeliveryDocument | null> {
    return this.collection.findOneAndUpdate(
      { _id: id, status: "pending", attempt_count: attempt, $or: [{ lease_until: null }, { lease_until: { $lte: now } }] },
      { $inc: { attempt_count: 1 }, $set: { lease_until: leaseUntil, updated_at: now } },
      { returnDocument: "after", projection: CLAIMED_FIELDS },
    );
  }

  /**
   * Claims the next attempt of each pending delivery of `ids` that has none in flight (its last outcome recorded, no
   * lease), as `claimAttempt` does, without knowing their attempt numbers first; answers those claimed (a delivery
   * leased, settled or gone is left out). Two commands for them all: one update claims them and stamps each with a
   * token of this call (`lease_token`), one read answers the records stamped with it. A record claimed by another
   * process at the same moment carries that process's token, so no attempt is answered to two callers.
   */
  async claimUnleasedAttempts(ids: readonly string[], now: Date, leaseUntil: Date): Promise<WebhookDeliveryDocument[]> {
    if (ids.length === 0) return [];
    const token = newUuid();
    const { modifiedCount } = await this.collection.updateMany(
      { _id: { $in: [...ids] }, status: "pending", lease_until: null },
      { $inc: { attempt_count: 1 }, $set: { lease_until: leaseUntil, lease_token: token, updated_at: now } },
    );
    if (modifiedCount === 0) return [];
    return this.collection.find({ _id: { $in: [...ids] }, lease_token: token }, { projection: CLAIMED_FIELDS, batchSize: ids.length }).toArray();
  }

  /** Records many outcomes in one round trip, each unless its delivery moved on meanwhile (the hot path of successes). */
  async recordAttempts(outcomes: readonly OutcomeWrite[]): Promise<void> {
    if (outcomes.length === 0) return;
    await this.writeOutcomes(outcomes);
  }

  /**
   * Records many outcomes, each unless its delivery moved on meanwhile, in one round trip, and answers for each whether it was recorded. When
   * some updates were not (their deliveries moved on meanwhile), the records are read back: one carrying the outcome's
   * attempt number, no lease and its time was written by this call. A held record was recorded unless another
   * record of its event and endpoint was there first.
   */
  async recordAttemptsEach(outcomes: readonly OutcomeWrite[]): Promise<boolean[]> {
    if (outcomes.length === 0) return [];
    const { updates, updated, duplicates } = await this.writeOutcomes(outcomes);
    const recorded = outcomes.map((o, i) => (o.held ? !duplicates.has(i) : true));
    if (updated === updates.length) return recorded;
    const records = await this.collection
      .find({ _id: { $in: updates.map((i) => outcomes[i]!.id) } }, { projection: { attempt_count: 1, lease_until: 1, updated_at: 1 } })
      .toArray();
    const byId = new Map(records.map((r) => [r._id, r]));
    for (const i of updates) {
      const { id, attempt, now } = outcomes[i]!;
      const record = byId.get(id);
      recorded[i] =
        record !== undefined && record.attempt_count === attempt && record.lease_until === null && record.updated_at.getTime() === now.getTime();
    }
    return recorded;
  }

  /**
   * Writes outcomes: a held record inserted finished, with its outcome (unless its event and endpoint have a record
   * already), every other as an update unless its delivery moved on meanwhile. Answers the positions of the updates,
   * how many were written, and the positions of the held records found already recorded.
   */
  private async writeOutcomes(outcomes: readonly OutcomeWrite[]): Promise<{ updates: number[]; updated: number; duplicates: Set<number> }> {
    const updates: number[] = [];
    const held: number[] = [];
    outcomes.forEach((o, i) => (o.held ? held : updates).push(i));
    const [updated, heldDuplicates] = await Promise.all([
      updates.length === 0
        ? 0
        : rawUpdates(
            this.db,
            this.collection.collectionName,
            updates.map((i) => {
              const { id, attempt, outcome, now } = outcomes[i]!;
              return { q: { _id: id, status: "pending", attempt_count: attempt }, u: outcomeUpdate(outcome, now) };
            }),
            OUTCOMES_PER_COMMAND,
          ),
      held.length === 0
        ? new Set<number>()
        : rawInsertsOnce(
            this.db,
            this.collection.collectionName,
            held.map((i) => finishedRecord(outcomes[i]!)),
            OUTCOMES_PER_COMMAND,
          ),
    ]);
    return { updates, updated, duplicates: new Set([...heldDuplicates].map((k) => held[k]!)) };
  }

  /** Settles as failed every pending delivery matching `filter`, recording `error` as its last attempt. */
  private async settleFailed(filter: Filter<WebhookDeliveryDocument>, error: string, now: Date): Promise<number> {
    const settlement = failedSettlement(error, now);
    const result = await this.collection.updateMany(
      { ...filter, status: "pending" },
      { $set: settlement, $push: historyOf(settlement.last_attempt!) },
    );
    return result.modifiedCount;
  }

  /**
   * Settles as failed a delivery whose claimed attempt was never sent, giving the claim back; also when the
   * endpoint's disabling settled it meanwhile.
   */
  async settleUnsent(id: string, attempt: number, error: string, now: Date): Promise<void> {
    const settlement = failedSettlement(error, now);
    await this.collection.updateOne(
      { _id: id, attempt_count: attempt, status: { $ne: "succeeded" } },
      { $set: { ...settlement, attempt_count: attempt - 1 }, $push: historyOf(settlement.last_attempt!) },
    );
  }

  /** The endpoint was disabled: its pending deliveries settle as failed. */
  settleEndpointPending(endpointId: string, error: string, now: Date): Promise<number> {
    return this.settleFailed({ endpoint_id: endpointId }, error, now);
  }

  /** Starts a fresh cycle of attempts for a settled delivery, due now; null when it is pending (or unknown). */
  async replay(endpointId: string, id: string, now: Date): Promise<WebhookDeliveryDocument | null> {
    return withLastAttemptInFull(
      await this.collection.findOneAndUpdate(
        { _id: id, endpoint_id: endpointId, status: { $ne: "pending" } },
        { $set: freshCycle(now, now) },
        { returnDocument: "after" },
      ),
    );
  }

  /** Ids of an endpoint's failed deliveries created in [since, until), oldest first, at most `limit`. */
  async findFailedCreatedIn(endpointId: string, since: Date, until: Date, limit: number): Promise<string[]> {
    const found = await this.collection
      .find({ endpoint_id: endpointId, status: "failed", created_at: { $gte: since, $lt: until } })
      .project<{ _id: string }>({ _id: 1 })
      .sort({ created_at: 1, _id: 1 })
      .limit(limit)
      .toArray();
    return found.map((d) => d._id);
  }

  /**
   * Starts a fresh cycle for each of these deliveries still failed, its first attempt due at the time given
   * (a recovery's pacing). Answers how many started; one replayed meanwhile is left as it is.
   */
  async restartFailed(endpointId: string, schedule: readonly { id: string; at: Date }[], now: Date): Promise<number> {
    if (schedule.length === 0) return 0;
    const result = await this.collection.bulkWrite(
      schedule.map(({ id, at }) => ({
        updateOne: { filter: { _id: id, endpoint_id: endpointId, status: "failed" as const }, update: { $set: freshCycle(at, now) } },
      })),
      { ordered: false },
    );
    return result.modifiedCount;
  }

  async deleteForEndpoint(endpointId: string): Promise<number> {
    const result = await this.collection.deleteMany({ endpoint_id: endpointId });
    return result.deletedCount;
  }
}

/** An outcome's update: the attempt appended to the history (or the history written whole, for an older record). */
function outcomeUpdate({ status, next_attempt_at, attempt, legacyHistory }: AttemptOutcome, now: Date) {
  const outcome: DeliveryAttemptRecord = {
    attempted_at: attempt.attempted_at,
    response_status: attempt.response_status,
    error: attempt.error,
    duration_ms: attempt.duration_ms,
  };
  const set = { status, next_attempt_at, last_attempt: outcome, lease_until: null, updated_at: now };
  if (legacyHistory !== undefined) return { $set: { ...set, attempts: [...legacyHistory, attempt].slice(-DELIVERY_ATTEMPTS_KEPT) } };
  return { $set: set, $push: historyOf(attempt) };
}

/**
 * A held record (fan-out's, never written) with its first outcome: the document its insert and that outcome's
 * update would have left, field for field, written by one insert.
 */
function finishedRecord({ held, outcome, now }: OutcomeWrite): WebhookDeliveryDocument {
  return { ...held!, ...outcomeUpdate(outcome, now).$set, attempts: [...(held!.attempts ?? []), outcome.attempt].slice(-DELIVERY_ATTEMPTS_KEPT) };
}

/**
 * A record as the API shows it: a last attempt stored as its outcome alone (no `request` field) is the last of the
 * history, answered in full from there. Records that keep it whole (older ones, settlements) are left as they are.
 */
function withLastAttemptInFull(delivery: WebhookDeliveryDocument | null): WebhookDeliveryDocument | null {
  const last = delivery?.last_attempt;
  const kept = delivery?.attempts?.at(-1);
  if (!last || !kept || "request" in last || !sameAttempt(last, kept)) return delivery;
  delivery!.last_attempt = kept;
  return delivery;
}

function sameAttempt(a: DeliveryAttemptRecord, b: DeliveryAttemptRecord): boolean {
  return a.attempted_at.getTime() === b.attempted_at.getTime() && a.error === b.error && a.response_status === b.response_status;
}

/** A record older than the history has its last attempt alone: the history it starts with. Undefined for others. */
export function legacyHistory(delivery: WebhookDeliveryDocument): DeliveryAttemptRecord[] | undefined {
  if (delivery.attempts !== undefined) return undefined;
  return delivery.last_attempt !== null ? [delivery.last_attempt] : [];
}

/** Appends an attempt to the history, keeping the latest DELIVERY_ATTEMPTS_KEPT. */
function historyOf(attempt: DeliveryAttemptRecord) {
  return { attempts: { $each: [attempt], $slice: -DELIVERY_ATTEMPTS_KEPT } };
}

/** A delivery settled as failed without an attempt of its own: `error` tells why. */
function failedSettlement(error: string, now: Date): Partial<WebhookDeliveryDocument> {
  return {
    status: "failed",
    next_attempt_at: null,
    lease_until: null,
    last_attempt: { attempted_at: now, response_status: null, error, duration_ms: 0 },
    updated_at: now,
  };
}

/**
 * A fresh cycle of attempts, as replay and recovery start it: pending again, attempts numbered from 1, the first
 * due at `dueAt`; `last_attempt` keeps the previous cycle's last attempt until the new one is made.
 */
function freshCycle(dueAt: Date, now: Date): Partial<WebhookDeliveryDocument> {
  return { status: "pending", attempt_count: 0, next_attempt_at: dueAt, lease_until: null, updated_at: now };
}
