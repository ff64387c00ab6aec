// Turns an Authorization header into a Principal, or a 401/403 error (docs/contract.md, Tenancy and API keys).
import { hashApiKey, readBearerCredential } from "../domain/api-keys.ts";
import type { Clock } from "../domain/clock.ts";
import { type SvcError, svcError } from "../domain/errors.ts";
import type { ApiKeyRepository } from "../store/api-key-repository.ts";
import type { OrganizationRepository } from "../store/organization-repository.ts";
import type { Principal } from "./principal.ts";
import { TtlCache } from "../lib/ttl-cache.ts";

interface LookupOutcome {
  principal: Principal | null;
  error: SvcError | null;
  /** The key's holder when the key is known but refused (revoked, organization suspended, live not enabled). */
  refusedOwner: Principal | null;
  /** Unknown keys are not kept, so random guesses cannot grow the cache. */
  cacheable: boolean;
}

export interface ApiKeyAuthenticatorOptions {
  clock: Clock;
  defaultRateLimit: number;
  /**
   * How long a key's outcome is reused before it is read again. Changes made through this process drop the
   * cache at once; changes made by another instance are seen within this time.
   */
  cacheMs: number;
  /** Hears of a failure to record a key's last use, which never fails the request that used it. */
  onBackgroundError?: (error: unknown) => void;
}

/** A key's last use is written at most this often by one process: requests do not each add a write. */
export const LAST_USED_RESOLUTION_MS = 60_000;

export class ApiKeyAuthenticator {
  private readonly cache: TtlCache<string, LookupOutcome>;
  /** When this process last recorded each key's use. */
  private readonly usesRecorded = new Map<string, number>();

  constructor(
    private readonly apiKeys: ApiKeyRepository,
    private readonly organizations: OrganizationRepository,
    private readonly options: ApiKeyAuthenticatorOptions,
  ) {
    this.cache = new TtlCache(options.cacheMs);
  }

  /** Order of checks: key present, well formed, known, not revoked; organization not suspended; live enabled. */
  async authenticate(authorization: string | null | undefined): Promise<Principal> {
    const credential = readBearerCredential(authorization);
    if (credential.kind === "missing") throw svcError("missing_api_key");
    if (credential.kind === "malformed") throw svcError("invalid_api_key");
    if (credential.kind === "scheme") {
      throw svcError(
        "invalid_api_key",
        "Send the API key as Authorization: Bearer <key>; other forms, such as Basic authentication (curl -u), are not accepted.",
      );
    }
    return this.authenticateHash(hashApiKey(credential.secret), credential.livemode);
  }

  /**
   * The same checks for a key known by its hash (as api_keys stores it): a dashboard session keeps only the hash
   * and is checked again on every page, so a revoked key or a suspended organization ends it.
   */
  async authenticateHash(secretHash: string, livemode: boolean): Promise<Principal> {
    const now = this.options.clock().getTime();
    const outcome = await this.outcomeOf(secretHash, livemode, now);
    if (outcome.error) throw outcome.error;
    this.recordUse(outcome.principal!.apiKeyId, now);
    return outcome.principal!;
  }

  /**
   * Whose key an Authorization header holds, whether or not it is accepted (a revoked key, a suspended
   * organization): the request log files a refused call under its project. Null for a key no project has.
   */
  async holderOf(authorization: string): Promise<Principal | null> {
    const credential = readBearerCredential(authorization);
    if (credential.kind !== "key") return null;
    const outcome = await this.outcomeOf(hashApiKey(credential.secret), credential.livemode, this.options.clock().getTime());
    return outcome.principal ?? outcome.refusedOwner;
  }

  private outcomeOf(secretHash: string, livemode: boolean, now: number): Promise<LookupOutcome> {
    return this.cache.getOrLoad(
      secretHash,
      now,
      () => this.lookup(secretHash, livemode),
      (outcome) => outcome.cacheable,
    );
  }

  /** Notes the key's use in the background, once per LAST_USED_RESOLUTION_MS: never awaited by the request. */
  private recordUse(apiKeyId: string, now: number): void {
    const recorded = this.usesRecorded.get(apiKeyId);
    if (recorded !== undefined && now - recorded < LAST_USED_RESOLUTION_MS) return;
    this.usesRecorded.set(apiKeyId, now);
    this.apiKeys.recordUse(apiKeyId, new Date(now)).catch((error: unknown) => {
      this.usesRecorded.delete(apiKeyId);
      this.options.onBackgroundError?.(error);
    });
  }

  /** Forgets every cached outcome: called after keys or organizations change in this process. */
  invalidate(): void {
    this.cache.clear();
  }

  private async lookup(secretHash: string, livemode: boolean): Promise<LookupOutcome> {
    const key = await this.apiKeys.findBySecretHash(secretHash);
    const unknown = { principal: null, error: svcError("invalid_api_key"), refusedOwner: null, cacheable: false };
    if (!key || key.livemode !== livemode) return unknown;
    const holder: Principal = {
      apiKeyId: key._id,
      projectId: key.project_id,
      organizationId: key.organization_id,
      livemode: key.livemode,
      rateLimit: key.rate_limit ?? this.options.defaultRateLimit,
    };
    const refused = (code: "api_key_revoked" | "organization_suspended" | "live_not_enabled") => ({
      principal: null,
      error: svcError(code),
      refusedOwner: holder,
      cacheable: true,
    });
    if (key.revoked_at) return refused("api_key_revoked");
    const organization = await this.organizations.findById(key.organization_id);
    if (!organization) return unknown;
    if (organization.suspended) return refused("organization_suspended");
    if (key.livemode && !organization.live_enabled) return refused("live_not_enabled");
    return { principal: holder, error: null, refusedOwner: null, cacheable: true };
  }
}
