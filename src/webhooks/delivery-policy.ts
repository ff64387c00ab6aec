// The fixed numbers of webhook delivery (docs/contract.md, "Webhooks" and "Limits").

/** Attempts per delivery cycle; the delivery fails after the last. */
export const MAX_DELIVERY_ATTEMPTS = 7;

/** Failed attempts in a row (test events excluded) that disable an endpoint. */
export const CONSECUTIVE_FAILURES_TO_DISABLE = 20;

/** Past this many pending deliveries an endpoint's new events are recorded as failed with `queue_full`. */
export const DEFAULT_MAX_PENDING_PER_ENDPOINT = 10_000;

/**
 * How long a claimed attempt stays leased beyond its time-out: covers recording the outcome. Past the lease,
 * a worker that died is presumed dead and its attempt (already counted) is taken over.
 */
export const LEASE_MARGIN_MS = 2000;

/** Recovered deliveries per second per endpoint, at most, by default (SVC_WEBHOOK_RECOVERY_RATE). */
export const DEFAULT_RECOVERY_RATE_PER_SECOND = 10;

/** How far apart a recovery puts the first attempts of its deliveries: 1/rate second. */
export function recoverySpacingMs(ratePerSecond: number): number {
  return 1000 / ratePerSecond;
}
