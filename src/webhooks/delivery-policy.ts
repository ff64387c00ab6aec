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

/** What happened to one attempt, as the handler that ran it saw it. */
export interface AttemptFacts {
  /** The attempt's number in its cycle (1 to 7). */
  attempt: number;
  /**
   * null: the receiver answered 2xx. Otherwise the attempt's error code; `internal_error` is our failure (the
   * process stopping, a missing event), never held against the endpoint.
   */
  error: string | null;
  /**
   * The attempt was claimed by a process that died before recording it (its lease ran out): it counts, and
   * the next one follows at once (the lease already made the receiver wait).
   */
  lost?: boolean;
  /** The endpoint's consecutive failures once this attempt is counted (null when it is not counted). */
  consecutiveFailures: number | null;
  now: Date;
  /** Delays after failed attempts 1..6. */
  retryScheduleMs: readonly number[];
}

/** What follows an attempt: the delivery's outcome and whether its endpoint is disabled now. */
export interface AttemptVerdict {
  delivery: { status: "succeeded" } | { status: "pending"; nextAttemptAt: Date } | { status: "failed" };
  disableEndpoint: boolean;
}

/**
 * The one decision after an attempt: succeeded; retried at the schedule's time (at once after a lost attempt);
 * failed after the 7th; and the endpoint disabled by the 20th consecutive failure counted against it.
 */
export function decideAfterAttempt(facts: AttemptFacts): AttemptVerdict {
  const disableEndpoint = facts.error !== null && facts.consecutiveFailures !== null && facts.consecutiveFailures >= CONSECUTIVE_FAILURES_TO_DISABLE;
  if (facts.error === null) return { delivery: { status: "succeeded" }, disableEndpoint: false };
  if (facts.attempt >= MAX_DELIVERY_ATTEMPTS) return { delivery: { status: "failed" }, disableEndpoint };
  const delayMs = facts.lost ? 0 : facts.retryScheduleMs[facts.attempt - 1]!;
  return { delivery: { status: "pending", nextAttemptAt: new Date(facts.now.getTime() + delayMs) }, disableEndpoint };
}
