// Recovery: every failed delivery of an endpoint created in a window starts a fresh cycle (the rule replay
// follows, kept in the repository), paced so the receiver is not flooded. The pacing is the deliveries' jobs:
// the k-th recovered delivery's job runs k/rate seconds after the recovery's span starts, so whichever process
// takes it, it does not start earlier. Spans of the same endpoint follow each other, so two recoveries never add up.
import type { Clock } from "../domain/clock.ts";
import type { RecoveryWindow } from "../domain/webhook-endpoint-rules.ts";
import type { ScheduledJob } from "../jobs/job-queue.ts";
import type { WebhookDeliveryRepository } from "../store/webhook-delivery-repository.ts";
import type { WebhookEndpointRepository } from "../store/webhook-endpoint-repository.ts";
import { recoverySpacingMs } from "./delivery-policy.ts";

export interface DeliveryRecoveryDependencies {
  deliveries: WebhookDeliveryRepository;
  endpoints: WebhookEndpointRepository;
  clock: Clock;
  /** Writes (or moves) the jobs of these deliveries, in one bulk write. */
  schedule: (jobs: readonly ScheduledJob<{ deliveryId: string }>[]) => Promise<void>;
}

export interface DeliveryRecoveryOptions {
  /** First attempts of recovered deliveries per second per endpoint. */
  ratePerSecond: number;
  /** The pending limit of an endpoint: a recovery queues no more than the room left under it. */
  maxPendingPerEndpoint: number;
}

export class DeliveryRecovery {
  private readonly spacingMs: number;

  constructor(
    private readonly deps: DeliveryRecoveryDependencies,
    private readonly options: DeliveryRecoveryOptions,
  ) {
    this.spacingMs = recoverySpacingMs(options.ratePerSecond);
  }

  /**
   * Queues the endpoint's failed deliveries created in the window, oldest first, up to the room left under
   * the pending limit (the rest stay failed for a later recovery); answers how many were queued.
   */
  async recover(endpointId: string, window: RecoveryWindow): Promise<number> {
    const { deliveries, endpoints, clock } = this.deps;
    const { maxPendingPerEndpoint } = this.options;
    const now = clock();
    const room = maxPendingPerEndpoint - (await deliveries.countPending(endpointId, maxPendingPerEndpoint));
    if (room <= 0) return 0;
    const ids = await deliveries.findFailedCreatedIn(endpointId, window.since, window.until, room);
    if (ids.length === 0) return 0;
    const start = (await endpoints.reserveRecoverySpan(endpointId, now, Math.ceil(ids.length * this.spacingMs))).getTime();
    const schedule = ids.map((id, k) => ({ id, at: new Date(start + Math.ceil(k * this.spacingMs)) }));
    const queued = await deliveries.restartFailed(endpointId, schedule, now);
    // A delivery replayed meanwhile (not restarted here) has its job moved to its paced time: it still runs.
    await this.deps.schedule(schedule.map(({ id, at }) => ({ data: { deliveryId: id }, at })));
    return queued;
  }
}
