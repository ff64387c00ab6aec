// Recovery: every failed delivery of an endpoint created in a window starts a fresh cycle (the rule replay
// follows, kept in the repository), paced so the receiver is not flooded. The pacing is written into the records
// themselves: the k-th recovered delivery's first attempt is due k/rate seconds after the recovery's span starts,
// so whichever process takes it, it does not start earlier. Spans of the same endpoint follow each other, so two
// recoveries never add up.
//
// Due times alone would let attempts bunch up after a stall (a busy event loop wakes up late and finds several
// due at once), so a delivering process also drips its recoveries' attempts: each starts at its due time and at
// least 1/rate second after the previous recovered attempt to the same endpoint started in this process.
import type { Clock } from "../domain/clock.ts";
import type { RecoveryWindow } from "../domain/webhook-endpoint-rules.ts";
import type { WebhookDeliveryRepository } from "../store/webhook-delivery-repository.ts";
import type { WebhookEndpointRepository } from "../store/webhook-endpoint-repository.ts";
import { recoverySpacingMs } from "./delivery-policy.ts";

export interface DeliveryRecoveryDependencies {
  deliveries: WebhookDeliveryRepository;
  endpoints: WebhookEndpointRepository;
  clock: Clock;
  /**
   * Starts a recovered delivery's attempt now in this process; absent in a process that does not deliver (the
   * workers' polls then find each one as it falls due).
   */
  runDue?: (deliveryId: string) => void;
}

export interface DeliveryRecoveryOptions {
  /** First attempts of recovered deliveries per second per endpoint. */
  ratePerSecond: number;
  /** The pending limit of an endpoint: a recovery queues no more than the room left under it. */
  maxPendingPerEndpoint: number;
}

interface Paced {
  id: string;
  at: Date;
}

export class DeliveryRecovery {
  private readonly spacingMs: number;
  /** When this process last started a recovered attempt, per endpoint. */
  private readonly lastStarted = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Recovered deliveries this process has yet to start. */
  private readonly dripping = new Set<string>();
  private stopped = false;

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
    // A delivery replayed meanwhile (not restarted here) is dripped all the same: its claim comes to nothing.
    if (this.deps.runDue) {
      for (const { id } of schedule) this.dripping.add(id);
      this.drip(endpointId, schedule, 0);
    }
    return queued;
  }

  /**
   * Whether this process will start the delivery's attempt itself, at its pace: the poll of this process leaves
   * it alone, or a drip that fell behind (a stalled event loop) would see the poll start a burst of them.
   */
  drips(deliveryId: string): boolean {
    return this.dripping.has(deliveryId);
  }

  /** Stops the drips; what they had not started stays due in the records, for any process's poll. */
  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.dripping.clear();
  }

  private drip(endpointId: string, schedule: readonly Paced[], k: number): void {
    const next = schedule[k];
    if (this.stopped || next === undefined) return;
    const now = this.deps.clock().getTime();
    const earliest = Math.max(next.at.getTime(), (this.lastStarted.get(endpointId) ?? -Infinity) + this.spacingMs);
    if (earliest > now) {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.drip(endpointId, schedule, k);
      }, earliest - now);
      timer.unref();
      this.timers.add(timer);
      return;
    }
    this.lastStarted.set(endpointId, now);
    this.dripping.delete(next.id);
    this.deps.runDue!(next.id);
    if (k + 1 < schedule.length) this.drip(endpointId, schedule, k + 1);
    else if (this.lastStarted.size > 10_000) this.lastStarted.clear();
  }
}
