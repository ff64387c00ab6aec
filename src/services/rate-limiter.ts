// Fixed 60-second windows per subject, counted in the database so every instance shares one quota.
import type { Clock } from "../domain/clock.ts";
import type { RateLimitRepository } from "../store/rate-limit-repository.ts";

export const RATE_LIMIT_WINDOW_MS = 60_000;

export interface RateLimitStatus {
  limit: number;
  remaining: number;
  /** Whole seconds before the window renews, at least 1. */
  resetSeconds: number;
  exceeded: boolean;
}

function resetSeconds(windowEnd: number, now: number): number {
  return Math.max(1, Math.ceil((windowEnd - now) / 1000));
}

export class RateLimiter {
  constructor(
    private readonly windows: RateLimitRepository,
    private readonly clock: Clock,
  ) {}

  async consume(subject: string, limit: number): Promise<RateLimitStatus> {
    const now = this.clock().getTime();
    const windowStart = now - (now % RATE_LIMIT_WINDOW_MS);
    const windowEnd = windowStart + RATE_LIMIT_WINDOW_MS;
    const count = await this.windows.add(subject, new Date(windowStart), new Date(windowEnd));
    return {
      limit,
      remaining: Math.max(0, limit - count),
      resetSeconds: resetSeconds(windowEnd, now),
      exceeded: count > limit,
    };
  }

  /** What the headers say when the count cannot be read (database down): the whole quota of this window. */
  uncounted(limit: number): RateLimitStatus {
    const now = this.clock().getTime();
    const windowEnd = now - (now % RATE_LIMIT_WINDOW_MS) + RATE_LIMIT_WINDOW_MS;
    return { limit, remaining: limit, resetSeconds: resetSeconds(windowEnd, now), exceeded: false };
  }
}
