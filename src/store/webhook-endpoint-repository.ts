// Webhook endpoints of a project and environment, with their signing secrets and the failure count that
// disables them.
import type { Collection, Db, Filter, UpdateFilter } from "mongodb";
import { type ListWindow, newestFirstPage, type Page } from "./list-queries.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";
import { generateWebhookSecret } from "../domain/webhook-signature.ts";
import { CHANGED, compareAndSet } from "../lib/compare-and-set.ts";
import { asUniqueConflict } from "./unique-conflict.ts";

export type DisabledReason = "manual" | "consecutive_failures";

/** The unique values of an endpoint, by the document field their index covers. */
const UNIQUE_FIELDS = { url: "url" } as const;

export interface WebhookEndpointDocument {
  _id: string;
  project_id: string;
  livemode: boolean;
  /** Normalised (lowercase scheme and host, default port dropped); unique per project and environment. */
  url: string;
  description: string;
  event_types: string[];
  enabled: boolean;
  disabled_reason: DisabledReason | null;
  /**
   * The signing secrets in clear. Every delivery needs them as HMAC keys, so they cannot be stored as one-way
   * hashes the way API keys are; they leave the service only in the create and rotate answers.
   */
  secret: string;
  /** The secret before the last rotation, signing beside the new one until `previous_secret_expires_at`. */
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  /** Failed delivery attempts since the last success; 20 disable the endpoint. Test events never count. */
  consecutive_failures: number;
  /**
   * When the last first attempt a recovery scheduled for this endpoint is due (absent before its first
   * recovery): a new recovery paces its deliveries after it, so two recoveries never add up.
   */
  recovery_paced_until?: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** What a new registration holds: enabled, subscribed to `eventTypes`, no failures yet, a fresh signing secret. */
export function newWebhookEndpoint(registration: {
  id: string;
  scope: TenantScope;
  url: string;
  description: string;
  eventTypes: string[];
  now: Date;
}): WebhookEndpointDocument {
  const { id, scope, url, description, eventTypes, now } = registration;
  return {
    _id: id,
    project_id: scope.projectId,
    livemode: scope.livemode,
    url,
    description,
    event_types: eventTypes,
    enabled: true,
    disabled_reason: null,
    secret: generateWebhookSecret(),
    previous_secret: null,
    previous_secret_expires_at: null,
    consecutive_failures: 0,
    created_at: now,
    updated_at: now,
  };
}

export class WebhookEndpointRepository {
  private readonly collection: Collection<WebhookEndpointDocument>;

  constructor(db: Db) {
    this.collection = db.collection<WebhookEndpointDocument>("webhook_endpoints");
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([
      { key: { project_id: 1, livemode: 1, url: 1 }, name: "url_unique", unique: true },
      { key: { project_id: 1, livemode: 1, created_at: -1, _id: -1 }, name: "tenant_newest_first" },
    ]);
  }

  /** Throws a UniqueConflict (`url`) when the URL is already registered in the scope. */
  async insert(endpoint: WebhookEndpointDocument): Promise<void> {
    await this.collection.insertOne(endpoint).catch((error) => {
      throw asUniqueConflict(error, UNIQUE_FIELDS);
    });
  }

  find(scope: TenantScope, id: string): Promise<WebhookEndpointDocument | null> {
    return this.collection.findOne({ _id: id, project_id: scope.projectId, livemode: scope.livemode });
  }

  findById(id: string): Promise<WebhookEndpointDocument | null> {
    return this.collection.findOne({ _id: id });
  }

  /** The endpoints of these ids that exist, in no particular order. */
  findManyById(ids: readonly string[]): Promise<WebhookEndpointDocument[]> {
    return this.collection.find({ _id: { $in: [...ids] } }).toArray();
  }

  /** Endpoints of the scope created before this one (creation time, then id): its rank in creation order. */
  countCreatedBefore(scope: TenantScope, endpoint: WebhookEndpointDocument): Promise<number> {
    return this.collection.countDocuments({
      project_id: scope.projectId,
      livemode: scope.livemode,
      $or: [{ created_at: { $lt: endpoint.created_at } }, { created_at: endpoint.created_at, _id: { $lt: endpoint._id } }],
    });
  }

  count(scope: TenantScope): Promise<number> {
    return this.collection.countDocuments({ project_id: scope.projectId, livemode: scope.livemode });
  }

  /**
   * Every endpoint of a scope, enabled or not: the candidates of a fan-out (a disabled endpoint still gets a
   * record of each event it subscribes to, settled as failed).
   */
  findInScope(scope: TenantScope): Promise<WebhookEndpointDocument[]> {
    return this.collection.find({ project_id: scope.projectId, livemode: scope.livemode }).toArray();
  }

  /** Newest first, within the window (docs/contract.md, Lists). */
  async list(scope: TenantScope, options: ListWindow<WebhookEndpointDocument>): Promise<Page<WebhookEndpointDocument>> {
    const filter: Filter<WebhookEndpointDocument> = { project_id: scope.projectId, livemode: scope.livemode };
    return newestFirstPage(this.collection, filter, options);
  }

  /**
   * Applies `update` to the endpoint of the scope; answers it afterwards, or null when it does not exist. A URL
   * registered by another endpoint is thrown as a UniqueConflict (`url`).
   */
  update(scope: TenantScope, id: string, update: UpdateFilter<WebhookEndpointDocument>): Promise<WebhookEndpointDocument | null> {
    return this.collection
      .findOneAndUpdate({ _id: id, project_id: scope.projectId, livemode: scope.livemode }, update, { returnDocument: "after" })
      .catch((error) => {
        throw asUniqueConflict(error, UNIQUE_FIELDS);
      });
  }

  async delete(scope: TenantScope, id: string): Promise<boolean> {
    const result = await this.collection.deleteOne({ _id: id, project_id: scope.projectId, livemode: scope.livemode });
    return result.deletedCount === 1;
  }

  /**
   * Counts failed attempts of endpoints (how many of each), in one bulk write, and answers each endpoint's consecutive
   * failures read back right after (absent: the endpoint is gone). Counts other processes wrote in between are in
   * that figure too: it is still the length of the endpoint's run of failures, as each attempt of the batch ends it.
   */
  async recordFailures(counts: ReadonlyMap<string, number>): Promise<Map<string, number>> {
    if (counts.size === 0) return new Map();
    await this.collection.bulkWrite(
      [...counts].map(([id, count]) => ({ updateOne: { filter: { _id: id }, update: { $inc: { consecutive_failures: count } } } })),
      { ordered: false },
    );
    const read = await this.collection.find({ _id: { $in: [...counts.keys()] } }, { projection: { consecutive_failures: 1 } }).toArray();
    return new Map(read.map((endpoint) => [endpoint._id, endpoint.consecutive_failures]));
  }

  /** Successes end the runs of failures of their endpoints (written only where there was one). */
  async endFailureStreaks(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.collection.updateMany({ _id: { $in: [...ids] }, consecutive_failures: { $ne: 0 } }, { $set: { consecutive_failures: 0 } });
  }

  /**
   * Reserves `durationMs` of recovery pacing for the endpoint, after any reserved before and not before `now`;
   * answers when the reservation starts. Concurrent recoveries each get their own span (compare and set).
   */
  async reserveRecoverySpan(id: string, now: Date, durationMs: number): Promise<Date> {
    const read = () => this.collection.findOne({ _id: id }, { projection: { recovery_paced_until: 1 } });
    return compareAndSet(`recovery pacing of endpoint ${id}`, read, async (current) => {
      if (!current) return now;
      const previous = current.recovery_paced_until ?? null;
      const start = previous !== null && previous.getTime() > now.getTime() ? previous : now;
      const result = await this.collection.updateOne(
        { _id: id, recovery_paced_until: previous },
        { $set: { recovery_paced_until: new Date(start.getTime() + durationMs) } },
      );
      return result.matchedCount === 1 ? start : CHANGED;
    });
  }

  /** Disables an enabled endpoint for its failures; answers whether this call disabled it. */
  async disableForFailures(id: string, now: Date): Promise<boolean> {
    const result = await this.collection.updateOne(
      { _id: id, enabled: true },
      { $set: { enabled: false, disabled_reason: "consecutive_failures", updated_at: now } },
    );
    return result.modifiedCount === 1;
  }
}
