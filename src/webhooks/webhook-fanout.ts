// The EventFanout of webhooks: one delivery record per (event, subscribed endpoint of the event's project and
// environment), inserted in one batch and idempotently (unique per event and endpoint). In a delivering process the
// first attempts, claimed at insertion, start at once, behind one job for the batch that waits one lease later as
// their guarantee (first-attempt-guarantees.ts); elsewhere each delivery's job is written due at once, for the
// workers. A disabled endpoint's record is settled at once as failed (`endpoint_disabled`, 0 attempts): nothing is
// dropped silently, and a recovery or a replay sends it once the endpoint is enabled again.
import type { Clock } from "../domain/clock.ts";
import { newDeliveryId } from "../domain/ids.ts";
import type { EventFanout } from "../events/event-fanout.ts";
import type { EventDocument } from "../store/event-repository.ts";
import type { WebhookDeliveryDocument, WebhookDeliveryRepository } from "../store/webhook-delivery-repository.ts";
import type { WebhookEndpointDocument, WebhookEndpointRepository } from "../store/webhook-endpoint-repository.ts";
import type { ScheduledJob } from "../jobs/job-queue.ts";
import { type DeliveryJobData, jobDataOf } from "./delivery-job.ts";
import type { AttemptHints } from "./delivery-worker.ts";
import { ENDPOINT_DISABLED } from "./endpoint-disabling.ts";

export interface FanoutDependencies {
  endpoints: WebhookEndpointRepository;
  deliveries: WebhookDeliveryRepository;
  clock: Clock;
  /**
   * Starts the first attempts of deliveries just recorded, in this process, leased until `leaseEnd`; resolves once
   * the job that stands behind them is written. Absent in a process that does not deliver (SVC_ROLE=api): records
   * are then left unclaimed, their jobs due at once, for the workers.
   */
  dispatch?: (firsts: readonly AttemptHints[], leaseEnd: Date) => Promise<void>;
  /** Writes (or moves; with `keepExisting`, only adds) the jobs of these deliveries, in one bulk write. */
  schedule: (jobs: readonly ScheduledJob<DeliveryJobData>[], options?: { keepExisting?: boolean }) => Promise<void>;
  maxPendingPerEndpoint: number;
  /** How long the first attempt, claimed at insertion, is leased to this process: its job runs then. */
  leaseMs: number;
}

/** While an endpoint's pending count is under half the limit, it is recounted at most this often. */
const RECOUNT_PENDING_MS = 1000;

export function subscribes(endpoint: WebhookEndpointDocument, type: string): boolean {
  return endpoint.event_types.includes("*") || endpoint.event_types.includes(type);
}

function groupByScope(events: readonly EventDocument[]): EventDocument[][] {
  const groups = new Map<string, EventDocument[]>();
  for (const event of events) {
    // webhook.test goes only to the endpoint tested, never through fan-out.
    if (event.type === "webhook.test") continue;
    const key = `${event.project_id}\u0000${event.livemode}`;
    const group = groups.get(key);
    if (group) group.push(event);
    else groups.set(key, [event]);
  }
  return [...groups.values()];
}

export class WebhookFanout implements EventFanout {
  /** Pending deliveries per endpoint as last counted, plus those this process added since. */
  private readonly pendingCounts = new Map<string, { count: number; countedAt: number }>();

  constructor(private readonly deps: FanoutDependencies) {}

  async fanOut(events: readonly EventDocument[]): Promise<void> {
    await Promise.all(groupByScope(events).map((group) => this.fanOutScope(group)));
  }

  private async fanOutScope(events: EventDocument[]): Promise<void> {
    const { endpoints, deliveries, clock } = this.deps;
    const first = events[0]!;
    const candidates = await endpoints.findInScope({ projectId: first.project_id, livemode: first.livemode });
    const now = clock();
    const leaseEnd = new Date(now.getTime() + this.deps.leaseMs);
    const records: WebhookDeliveryDocument[] = [];
    const hints = new Map<string, AttemptHints>();
    await Promise.all(
      candidates.map(async (endpoint) => {
        const matching = events.filter((event) => subscribes(endpoint, event.type));
        if (matching.length === 0) return;
        if (!endpoint.enabled) {
          for (const event of matching) records.push(deliveryRecord(endpoint, event, now, ENDPOINT_DISABLED));
          return;
        }
        const room = await this.roomFor(endpoint._id);
        let queuedCount = 0;
        for (const event of matching) {
          const queued = queuedCount < room;
          if (queued) queuedCount += 1;
          const claims = queued && this.deps.dispatch !== undefined;
          const record = deliveryRecord(endpoint, event, now, !queued ? QUEUE_FULL : claims ? leaseEnd : "unclaimed");
          records.push(record);
          if (claims) hints.set(record._id, { event, endpoint, claimed: record });
        }
        this.pendingCounts.get(endpoint._id)!.count += queuedCount;
      }),
    );
    const inserted = await deliveries.insertManyOnce(records);
    const jobs: ScheduledJob<DeliveryJobData>[] = [];
    const firsts: AttemptHints[] = [];
    const again = new Set<string>();
    for (const record of records) {
      if (record.status !== "pending") continue;
      if (!inserted.has(record._id)) again.add(`${record.event_id}\u0000${record.endpoint_id}`);
      else if (hints.has(record._id)) firsts.push(hints.get(record._id)!);
      else jobs.push({ data: jobDataOf(record), at: now });
    }
    // A relay that runs again (its process died between the records and their jobs) adds the jobs missing from the
    // records it finds pending; an existing job keeps its time.
    const missing: ScheduledJob<DeliveryJobData>[] = [];
    if (again.size > 0) {
      for (const found of await deliveries.findPendingOfEvents(events.map((e) => e._id))) {
        if (again.has(`${found.event_id}\u0000${found.endpoint_id}`)) missing.push({ data: jobDataOf(found), at: found.lease_until ?? now });
      }
    }
    if (missing.length > 0) await this.deps.schedule(missing, { keepExisting: true });
    // The jobs are written while the first attempts already run; the relay goes on only once they are. The
    // deliveries are new, so are their jobs: added, not moved.
    await Promise.all([this.deps.schedule(jobs, { keepExisting: true }), firsts.length > 0 ? this.deps.dispatch?.(firsts, leaseEnd) : undefined]);
  }

  /**
   * How many more deliveries the endpoint may queue. Counting is skipped while a recent count is far from the
   * limit: deliveries other processes add meanwhile cannot close the gap within a second.
   */
  private async roomFor(endpointId: string): Promise<number> {
    const limit = this.deps.maxPendingPerEndpoint;
    const known = this.pendingCounts.get(endpointId);
    const nowMs = Date.now();
    if (known && nowMs - known.countedAt < RECOUNT_PENDING_MS && known.count < limit / 2) return limit - known.count;
    if (this.pendingCounts.size > 10_000) this.pendingCounts.clear();
    const count = await this.deps.deliveries.countPending(endpointId, limit);
    this.pendingCounts.set(endpointId, { count, countedAt: nowMs });
    return limit - count;
  }
}

const QUEUE_FULL = "queue_full";

/**
 * A pending delivery whose first attempt is claimed by this process until the given lease end; one left for
 * any worker to claim ("unclaimed"); or (queue full, endpoint disabled) one already failed with 0 attempts,
 * visible, recoverable and replayable.
 */
export function deliveryRecord(
  endpoint: Pick<WebhookEndpointDocument, "_id">,
  event: Pick<EventDocument, "_id" | "project_id" | "livemode" | "type">,
  now: Date,
  claim: Date | "unclaimed" | typeof QUEUE_FULL | typeof ENDPOINT_DISABLED,
): WebhookDeliveryDocument {
  const queued = claim instanceof Date || claim === "unclaimed";
  const leaseUntil = claim instanceof Date ? claim : null;
  const lastAttempt = queued ? null : { attempted_at: now, response_status: null, error: claim, duration_ms: 0 };
  return {
    _id: newDeliveryId(),
    project_id: event.project_id,
    livemode: event.livemode,
    endpoint_id: endpoint._id,
    event_id: event._id,
    event_type: event.type,
    status: queued ? "pending" : "failed",
    attempt_count: leaseUntil ? 1 : 0,
    next_attempt_at: queued ? now : null,
    last_attempt: lastAttempt,
    attempts: lastAttempt ? [lastAttempt] : [],
    lease_until: leaseUntil,
    created_at: now,
    updated_at: now,
  };
}
