// Fixed 60-second windows per subject (API key or client address), counted in the database so every
// instance shares one quota. An instance reserves the quota in chunks and spends them locally, so most
// requests need no database write. Chunks shrink as the quota runs out (to one request when fewer than 64
// remain), so the total served in a window never exceeds the quota, and the part an instance may leave
// unspent when the window ends is small.
import type { Clock } from "../domain/clock.ts";
import type { RateLimitRepository } from "../store/rate-limit-repository.ts";

const RATE_LIMIT_WINDOW_MS = 60_000;
const MAX_CHUNK = 50;
const CHUNK_DIVISOR = 64;

export interface RateLimitStatus {
  limit: number;
  remaining: number;
  /** Whole seconds before the window renews, at least 1. */
  resetSeconds: number;
  exceeded: boolean;
}

interface Allowance {
  windowStart: number;
  /** Requests reserved by every instance in this window, as last read. */
  reservedTotal: number;
  /** Reserved by this instance and not yet spent. */
  unspent: number;
  /** The shared quota is gone for this window. */
  exhausted: boolean;
  reserving: Promise<void> | null;
}

function secondsToWindowEnd(windowStart: number, now: number): number {
  return Math.max(1, Math.ceil((windowStart + RATE_LIMIT_WINDOW_MS - now) / 1000));
}

export function chunkSize(limit: number, reservedTotal: number): number {
  return Math.max(1, Math.min(MAX_CHUNK, Math.floor((limit - reservedTotal) / CHUNK_DIVISOR)));
}

export class RateLimiter {
  private readonly allowances = new Map<string, Allowance>();

  constructor(
    private readonly windows: RateLimitRepository,
    private readonly clock: Clock,
  ) {}

  async consume(subject: string, limit: number): Promise<RateLimitStatus> {
    const now = this.clock().getTime();
    const windowStart = now - (now % RATE_LIMIT_WINDOW_MS);
    const resetSeconds = secondsToWindowEnd(windowStart, now);
    let allowance = this.allowances.get(subject);
    if (!allowance || allowance.windowStart !== windowStart) {
      if (this.allowances.size >= 100_000) this.dropOldWindows(windowStart);
      allowance = { windowStart, reservedTotal: 0, unspent: 0, exhausted: false, reserving: null };
      this.allowances.set(subject, allowance);
    }
    while (allowance.unspent === 0 && !allowance.exhausted) {
      // Concurrent requests wait for one reservation rather than each making its own.
      allowance.reserving ??= this.reserve(subject, allowance, limit).finally(() => {
        allowance.reserving = null;
      });
      await allowance.reserving;
    }
    if (allowance.unspent === 0) return { limit, remaining: 0, resetSeconds, exceeded: true };
    allowance.unspent--;
    return { limit, remaining: Math.max(0, limit - allowance.reservedTotal + allowance.unspent), resetSeconds, exceeded: false };
  }

  /** What the headers say when the count cannot be read (database down): the whole quota of this window. */
  uncounted(limit: number): RateLimitStatus {
    const now = this.clock().getTime();
    return { limit, remaining: limit, resetSeconds: secondsToWindowEnd(now - (now % RATE_LIMIT_WINDOW_MS), now), exceeded: false };
  }

  private async reserve(subject: string, allowance: Allowance, limit: number): Promise<void> {
    const chunk = chunkSize(limit, allowance.reservedTotal);
    const start = allowance.windowStart;
    const total = await this.windows.add(subject, new Date(start), new Date(start + RATE_LIMIT_WINDOW_MS), chunk);
    const granted = Math.max(0, Math.min(chunk, limit - (total - chunk)));
    allowance.reservedTotal = total;
    allowance.unspent += granted;
    if (granted < chunk) allowance.exhausted = true;
  }

  private dropOldWindows(currentWindowStart: number): void {
    for (const [subject, allowance] of this.allowances) {
      if (allowance.windowStart !== currentWindowStart) this.allowances.delete(subject);
    }
  }
}
