// Headers every response carries, REST and RPC alike.
import { LATEST_API_VERSION } from "../domain/api-version.ts";
import type { RateLimitStatus } from "../access/rate-limiter.ts";

export const REQUEST_ID_HEADER = "X-Request-Id";
export const API_VERSION_HEADER = "X-API-Version";
export const RATE_LIMIT_LIMIT_HEADER = "X-RateLimit-Limit";

export function identityHeaders(requestId: string): Record<string, string> {
  return { [REQUEST_ID_HEADER]: requestId, [API_VERSION_HEADER]: LATEST_API_VERSION };
}

export function rateLimitHeaders(status: RateLimitStatus): Record<string, string> {
  return {
    [RATE_LIMIT_LIMIT_HEADER]: String(status.limit),
    "X-RateLimit-Remaining": String(status.remaining),
    "X-RateLimit-Reset": String(status.resetSeconds),
  };
}
