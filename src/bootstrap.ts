// A development database gets an organization and project named "Default", live enabled, with one sandbox and
// one live key: given ones (SVC_SANDBOX_KEY, SVC_LIVE_KEY) are adopted as is, others are generated.
import { ConfigError } from "./config.ts";
import { apiKeyLivemode, hashApiKey } from "./domain/api-keys.ts";
import type { ApiKeyRepository } from "./store/api-key-repository.ts";
import type { OrganizationRepository } from "./store/organization-repository.ts";
import type { ProjectRepository } from "./store/project-repository.ts";
import type { TenancyAdmin } from "./services/tenancy-admin.ts";

export interface BootstrapResult {
  organizationId: string;
  projectId: string;
  /** Secrets created or adopted now; null when the project already had such a key (its secret is not stored). */
  sandboxKey: string | null;
  liveKey: string | null;
  /** The ids of those keys, or of the newest active key kept: the handles AdminService revokes them by. */
  sandboxKeyId: string;
  liveKeyId: string;
}

export interface BootstrapDependencies {
  tenancy: TenancyAdmin;
  organizations: OrganizationRepository;
  projects: ProjectRepository;
  apiKeys: ApiKeyRepository;
}

async function ensureKey(
  deps: BootstrapDependencies,
  projectId: string,
  livemode: boolean,
  given: string | undefined,
): Promise<{ secret: string | null; id: string }> {
  if (given !== undefined) {
    if (apiKeyLivemode(given) !== livemode) {
      throw new ConfigError(
        `${livemode ? "SVC_LIVE_KEY" : "SVC_SANDBOX_KEY"} must be ${livemode ? "svc_live_" : "svc_test_"} followed by at least 24 letters or digits`,
      );
    }
    const existing = await deps.apiKeys.findBySecretHash(hashApiKey(given));
    if (existing) {
      if (existing.project_id !== projectId) {
        throw new ConfigError(
          `${livemode ? "SVC_LIVE_KEY" : "SVC_SANDBOX_KEY"} is already a key of another project than "Default"; give another key or leave it unset`,
        );
      }
      return { secret: given, id: existing._id };
    }
    const { key, secret } = await deps.tenancy.createApiKey({ projectId, livemode }, given);
    return { secret, id: key._id };
  }
  const kept = await deps.apiKeys.findNewestActive(projectId, livemode);
  if (kept) return { secret: null, id: kept._id };
  const { key, secret } = await deps.tenancy.createApiKey({ projectId, livemode });
  return { secret, id: key._id };
}

export async function bootstrapDefaultProject(
  deps: BootstrapDependencies,
  keys: { sandboxKey?: string | undefined; liveKey?: string | undefined },
): Promise<BootstrapResult> {
  let organization = await deps.organizations.findBootstrap();
  if (!organization) {
    organization = await deps.tenancy.createOrganization({ name: "Default" }, true);
    organization = (await deps.organizations.update(organization._id, { live_enabled: true }))!;
  }
  let project = await deps.projects.findFirstOfOrganization(organization._id);
  project ??= await deps.tenancy.createProject({
    organizationId: organization._id,
    name: "Default",
    liveWalletsEnabled: true,
    livePhoneVerificationEnabled: true,
    liveKycEnabled: true,
  });
  // A Default project made before these settings existed gets them as a new one would.
  if (project.live_phone_verification_enabled === undefined || project.live_kyc_enabled === undefined) {
    project = await deps.tenancy.updateProject({ id: project._id, livePhoneVerificationEnabled: true, liveKycEnabled: true });
  }
  const sandbox = await ensureKey(deps, project._id, false, keys.sandboxKey);
  const live = await ensureKey(deps, project._id, true, keys.liveKey);
  return {
    organizationId: organization._id,
    projectId: project._id,
    sandboxKey: sandbox.secret,
    liveKey: live.secret,
    sandboxKeyId: sandbox.id,
    liveKeyId: live.id,
  };
}
