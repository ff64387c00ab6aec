// Who is calling: the API key's project and environment decide every read and write.
import { createContextKey, type HandlerContext } from "@connectrpc/connect";
import { svcError } from "../domain/errors.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";

export interface Principal {
  apiKeyId: string;
  projectId: string;
  organizationId: string;
  livemode: boolean;
  /** Requests per window for this key. */
  rateLimit: number;
}

export const principalKey = createContextKey<Principal | null>(null, { description: "authenticated API key" });

/** The caller of a public method; the transports authenticate before any method runs. */
function principalOf(context: HandlerContext): Principal {
  const principal = context.values.get(principalKey);
  if (!principal) throw svcError("missing_api_key");
  return principal;
}

/** The tenant the caller's key reads and writes: its project and environment. */
export function tenantOf(context: HandlerContext): TenantScope {
  const principal = principalOf(context);
  return { projectId: principal.projectId, livemode: principal.livemode };
}
