// The checks every public call passes before its method runs, shared by REST, Connect and gRPC:
// authentication, then the version header, then the rate limit.
// Quotas: a key's own (`key:<id>`); a route served without a key (the OpenAPI document) counts against the
// client address (`addr:<ip>`); requests refused before a key was accepted (bad or missing key, no route, body too
// large, unreadable HTTP) count against a separate quota of the address (`unauth:<ip>`), so failed keys cannot use
// up the document's quota, nor the document theirs.
import { isKnownApiVersion } from "../domain/api-version.ts";
import { type SvcError, svcError } from "../domain/errors.ts";
import type { ApiKeyAuthenticator } from "./api-key-authenticator.ts";
import type { Principal } from "./principal.ts";
import type { RateLimiter, RateLimitStatus } from "./rate-limiter.ts";

/** A key presented in an Authorization header, or the key of a dashboard session, known by its hash. */
export type KeyCredential =
  | { kind: "bearer"; authorization: string | null | undefined }
  | { kind: "session-key"; keyHash: string; livemode: boolean };

export interface GateInput {
  caller: KeyCredential;
  /** The `Svc-Version` header, if sent. */
  version: string | null | undefined;
  clientAddress: string;
}

export interface Admission {
  principal: Principal | null;
  rateLimit: RateLimitStatus;
  /** Why the call is refused, if it is. */
  error: SvcError | null;
}

/** The quota of a request without an accepted key: a route served anonymously, or a refusal. */
type AnonymousQuota = "addr" | "unauth";

export class RequestGate {
  constructor(
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly rateLimiter: RateLimiter,
    private readonly defaultRateLimit: number,
  ) {}

  async admit(input: GateInput): Promise<Admission> {
    let principal: Principal | null = null;
    let error: SvcError | null = null;
    try {
      const { caller } = input;
      principal =
        caller.kind === "bearer"
          ? await this.authenticator.authenticate(caller.authorization)
          : await this.authenticator.authenticateHash(caller.keyHash, caller.livemode);
    } catch (caught) {
      error = caught as SvcError;
    }
    return this.checkVersionAndQuota(principal, error, input, principal ? null : "unauth");
  }

  /**
   * Whose key an Authorization header holds, accepted or refused (revoked, organization suspended), without
   * counting a request: the request log files a refused call under it. Null for a key no project has.
   */
  holderOf(authorization: string): Promise<Principal | null> {
    return this.authenticator.holderOf(authorization);
  }

  /** The same checks for a route that needs no key (the OpenAPI document): version, then the address's quota. */
  admitAnonymous(input: Omit<GateInput, "caller">): Promise<Admission> {
    return this.checkVersionAndQuota(null, null, input, "addr");
  }

  private async checkVersionAndQuota(
    principal: Principal | null,
    refusal: SvcError | null,
    input: Omit<GateInput, "caller">,
    anonymousQuota: AnonymousQuota | null,
  ): Promise<Admission> {
    let error = refusal;
    if (!error && input.version != null && !isKnownApiVersion(input.version)) {
      error = svcError("unsupported_version", `Svc-Version "${input.version}" does not exist.`);
    }
    const rateLimit = await this.countRequest(principal, input.clientAddress, anonymousQuota ?? "unauth");
    if (!error && rateLimit.exceeded) {
      error = svcError("rate_limit_exceeded", undefined, { metadata: { retry_after: String(rateLimit.resetSeconds) } });
    }
    return { principal, rateLimit, error };
  }

  /** Counts a request refused before any key was checked (no route, body too large) against `unauth:<ip>`. */
  countAnonymous(clientAddress: string): Promise<RateLimitStatus> {
    return this.countRequest(null, clientAddress, "unauth");
  }

  /** Rate-limit headers for a refusal whose request could not be counted (the database failed). */
  uncounted(): RateLimitStatus {
    return this.rateLimiter.uncounted(this.defaultRateLimit);
  }

  private countRequest(principal: Principal | null, clientAddress: string, anonymousQuota: AnonymousQuota): Promise<RateLimitStatus> {
    return principal
      ? this.rateLimiter.consume(`key:${principal.apiKeyId}`, principal.rateLimit)
      : this.rateLimiter.consume(`${anonymousQuota}:${clientAddress}`, this.defaultRateLimit);
  }
}
