// Tenancy and access: who is calling (API keys, rate limits, idempotency records), the projects' settings and the
// administration of organizations, projects and keys. Nothing to start or stop.
import { ApiKeyAuthenticator } from "./access/api-key-authenticator.ts";
import { IdempotencyGuard } from "./access/idempotency-guard.ts";
import { RateLimiter } from "./access/rate-limiter.ts";
import { RequestGate } from "./access/request-gate.ts";
import { methodAccessCheck } from "./api/method-access.ts";
import { TenancyAdmin } from "./services/tenancy-admin.ts";
import { TenantSettings } from "./services/tenant-settings.ts";
import type { Foundation } from "./app-foundation.ts";

export function wireTenancy({ config, clock, repositories, onError }: Foundation) {
  const authenticator = new ApiKeyAuthenticator(repositories.apiKeys, repositories.organizations, {
    clock,
    defaultRateLimit: config.rateLimit,
    cacheMs: config.authCacheMs,
    onBackgroundError: (error) => onError(error, "api key last use"),
  });
  const rateLimiter = new RateLimiter(repositories.rateLimits, clock);
  const settings = new TenantSettings(repositories.projects, repositories.signupFlows, clock, config.settingsCacheMs);
  return {
    authenticator,
    rateLimiter,
    gate: new RequestGate(authenticator, rateLimiter, config.rateLimit),
    idempotency: new IdempotencyGuard(repositories.idempotency, clock, config.idempotencyLockMs),
    tenancy: new TenancyAdmin(repositories, authenticator, clock),
    settings,
    accessCheck: methodAccessCheck(async (projectId, setting) => (await settings.project(projectId))?.[setting] === true),
  };
}

export type TenancyWiring = ReturnType<typeof wireTenancy>;
