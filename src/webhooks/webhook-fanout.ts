// The EventFanout of webhooks: one delivery record per (event, subscribed endpoint of the event's project and
// environment), idempotently (unique per event and endpoint). In a delivering process the first attempts of fresh
// events, claimed by it, start at once, their records held until their outcomes (held-records.ts), behind one job
// for the batch that waits one lease later as their guarantee (first-attempt-guarantees.ts); elsewhere each
// delivery's record is written with its job due at once, for the workers. A disabled endpoint's record is settled at
// once as failed (`endpoint_disabled`, 0 attempts): nothing is dropped silently, and a recovery or a replay sends it
// once the endpoint is enabled again.
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
   * Starts the first attempts of these deliveries in this process, claimed until `leaseEnd`, their records not
   * written yet (held until their outcomes); resolves once the job that stands behind them is written. Absent in a
   * process that does not deliver (SVC_ROLE=api): records are then written unclaimed, their jobs due at once, for
   * the workers.
   */
  dispatch?: (firsts: readonly AttemptHints[], leaseEnd: Date) => Promise<void>;
  /** Writes (or moves; with `keepExisting`, only adds) the jobs of these deliveries, in one bulk write. */
  schedule: (jobs: readonly ScheduledJob<DeliveryJobData>[], options?: { keepExisting?: boolean }) => Promise<void>;
  maxPendingPerEndpoint: number;
  /** How long a first attempt is leased to this process: its guarantee job runs then. */
  leaseMs: number;
  /** Whether this process holds records of an event's deliveries, to be written with their first outcomes (HeldRecords). */
  holds?: (eventId: string) => boolean;
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

/**
 * How the queued deliveries of a fan-out go on: their first attempts sent at once by this process (their records
 * held until their outcomes), or their records written now with their jobs due at `jobsAt`: unclaimed (a process
 * that does not deliver; a relay that runs again), or with their first attempt claimed until `lostAt`, by a process
 * that did not record it (a batch's guarantee), which the job's run counts as lost.
 */
type Onward = "send" | { jobsAt: Date; lostAt?: Date };

export class WebhookFanout implements EventFanout {
  /** Pending deliveries per endpoint as last counted, plus those this process added since. */
  private readonly pendingCounts = new Map<string, { count: number; countedAt: number }>();

  constructor(private readonly deps: FanoutDependencies) {}

  /**
   * Events relayed before (a relay that runs again: the sweeper's, or two relays of one user's outbox at once) may
   * have their first attempts in flight in another process, their records still held there: their missing
   * deliveries are recorded with their jobs due once such attempts are over (one first attempt's lease), never
   * sent at once.
   */
  async fanOut(events: readonly EventDocument[], relayedBefore: ReadonlySet<string> = new Set()): Promise<void> {
    const now = this.deps.clock();
    const fresh = events.filter((event) => !relayedBefore.has(event._id));
    const again = events.filter((event) => relayedBefore.has(event._id));
    const onward: Onward = this.deps.dispatch !== undefined ? "send" : { jobsAt: now };
    const afterLease: Onward = { jobsAt: new Date(now.getTime() + this.deps.leaseMs) };
    await Promise.all([
      ...groupByScope(fresh).map((group) => this.fanOutScope(group, onward)),
      ...groupByScope(again).map((group) => this.fanOutScope(group, afterLease)),
    ]);
  }

  /**
   * The guarantee of a batch of first attempts, once their lease is over: every delivery of these events not
   * recorded (its process died holding it) is recorded now as that process held it, its first attempt claimed and
   * its lease over, with its job due at once, which counts the attempt as lost; pending ones get their job.
   */
  async recover(events: readonly EventDocument[]): Promise<void> {
    const now = this.deps.clock();
    const onward: Onward = { jobsAt: now, lostAt: now };
    await Promise.all(groupByScope(events).map((group) => this.fanOutScope(group, onward)));
  }

  private async fanOutScope(events: EventDocument[], onward: Onward): Promise<void> {
    const { endpoints, deliveries, clock } = this.deps;
    const first = events[0]!;
    const candidates = await endpoints.findInScope({ projectId: first.project_id, livemode: first.livemode });
    const now = clock();
    const leaseEnd = new Date(now.getTime() + this.deps.leaseMs);
    const records: WebhookDeliveryDocument[] = [];
    const hints = new Map<string, AttemptHints>();
    await Promise.all(
      candidates.map(async (endpoint) => {
        // A recovery gives an endpoint none of the events from before it existed, as their first relay did not, and
        // writes no record of an event whose records this process holds: its first attempts are under way here.
        const matching = events.filter(
          (event) =>
            subscribes(endpoint, event.type) &&
            (onward === "send" || (endpoint.created_at.getTime() <= event.created_at.getTime() && !this.deps.holds?.(event._id))),
        );
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
          const claims = queued && onward === "send";
          const claim = !queued ? QUEUE_FULL : claims ? leaseEnd : onward !== "send" && onward.lostAt ? onward.lostAt : "unclaimed";
          const record = deliveryRecord(endpoint, event, now, claim);
          records.push(record);
          if (claims) hints.set(record._id, { event, endpoint, claimed: record });
        }
        this.pendingCounts.get(endpoint._id)!.count += queuedCount;
      }),
    );
    // First attempts' records are held until their outcomes (held-records.ts); the others are written now.
    const written = hints.size === 0 ? records : records.filter((record) => !hints.has(record._id));
    const inserted = await deliveries.insertManyOnce(written);
    const jobs: ScheduledJob<DeliveryJobData>[] = [];
    const again = new Set<string>();
    for (const record of written) {
      if (record.status !== "pending") continue;
      if (!inserted.has(record._id)) again.add(`${record.event_id}\u0000${record.endpoint_id}`);
      else jobs.push({ data: jobDataOf(record), at: onward === "send" ? now : onward.jobsAt });
    }
    // A fan-out that runs again finds the records of an earlier one: those still pending get their job if they have
    // none (an existing job keeps its time), due when their attempt's lease ends or at their next attempt.
    const missing: ScheduledJob<DeliveryJobData>[] = [];
    if (again.size > 0) {
      for (const found of await deliveries.findPendingOfEvents(events.map((e) => e._id))) {
        if (again.has(`${found.event_id}\u0000${found.endpoint_id}`)) {
          missing.push({ data: jobDataOf(found), at: found.lease_until ?? found.next_attempt_at ?? now });
        }
      }
    }
    if (missing.length > 0) await this.deps.schedule(missing, { keepExisting: true });
    // The jobs are written while the first attempts already run; the relay goes on only once they are. The
    // deliveries are new, so are their jobs: added, not moved.
    const firsts = [...hints.values()];
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
