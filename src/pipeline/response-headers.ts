// Headers every response carries, REST and RPC alike, and the ones a refusal adds.
import type { RateLimitStatus } from "../access/rate-limiter.ts";
import { LATEST_API_VERSION } from "../domain/api-version.ts";
import type { DescribedError } from "../domain/errors.ts";

export const REQUEST_ID_HEADER = "X-Request-Id";
export const API_VERSION_HEADER = "X-API-Version";
export const RATE_LIMIT_LIMIT_HEADER = "X-RateLimit-Limit";
const RATE_LIMIT_RESET_HEADER = "X-RateLimit-Reset";
export const REPLAYED_HEADER = "Idempotent-Replayed";
const RETRY_AFTER_HEADER = "Retry-After";

export function identityHeaders(requestId: string): Record<string, string> {
  return { [REQUEST_ID_HEADER]: requestId, [API_VERSION_HEADER]: LATEST_API_VERSION };
}

export function rateLimitHeaders(status: RateLimitStatus): Record<string, string> {
  return {
    [RATE_LIMIT_LIMIT_HEADER]: String(status.limit),
    "X-RateLimit-Remaining": String(status.remaining),
    [RATE_LIMIT_RESET_HEADER]: String(status.resetSeconds),
  };
}

/**
 * What a refusal adds to the response headers: a 429 says when to come back, from the error's own
 * `retry_after` (a resend delay, say) or else from the end of the rate-limit window; any other refusal whose
 * error carries `retry_after` (a 503 of an unavailable provider) says it too.
 */
export function failureHeaders(described: DescribedError, headers: Record<string, string>): Record<string, string> {
  if (described.code !== "rate_limit_exceeded") {
    return described.metadata.retry_after !== undefined ? { [RETRY_AFTER_HEADER]: described.metadata.retry_after } : {};
  }
  const retryAfter = described.metadata.retry_after ?? headers[RATE_LIMIT_RESET_HEADER];
  return retryAfter === undefined ? {} : { [RETRY_AFTER_HEADER]: retryAfter };
}
