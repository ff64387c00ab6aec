// AdminService methods about tenancy: organizations, projects and API keys.
import type {
  CreateApiKeyRequest,
  CreateOrganizationRequest,
  CreateProjectRequest,
  UpdateOrganizationRequest,
  UpdateProjectRequest,
} from "../../gen/svc/admin/v1/admin_pb.ts";
import { apiKeyNameOf, generateApiKey, hashApiKey } from "../domain/api-keys.ts";
import type { Clock } from "../domain/clock.ts";
import { svcError, validationError } from "../domain/errors.ts";
import { newApiKeyId } from "../domain/ids.ts";
import { newUuid } from "../domain/random.ts";
import type { ApiKeyDocument, ApiKeyRepository } from "../store/api-key-repository.ts";
import type { OrganizationDocument, OrganizationRepository } from "../store/organization-repository.ts";
import type { ProjectChanges, ProjectDocument, ProjectRepository } from "../store/project-repository.ts";
import type { ApiKeyAuthenticator } from "../access/api-key-authenticator.ts";
import type { Page } from "../store/list-queries.ts";
import { type ListRequest, listParameters, listWindow } from "./pagination.ts";

export interface TenancyRepositories {
  organizations: OrganizationRepository;
  projects: ProjectRepository;
  apiKeys: ApiKeyRepository;
}

function requireName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length < 1 || trimmed.length > 200) throw validationError("name", "name must be 1 to 200 characters.");
  return trimmed;
}

export class TenancyAdmin {
  constructor(
    private readonly repositories: TenancyRepositories,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly clock: Clock,
  ) {}

  async createOrganization(request: Pick<CreateOrganizationRequest, "name">, bootstrap = false): Promise<OrganizationDocument> {
    const organization: OrganizationDocument = {
      _id: newUuid(),
      name: requireName(request.name),
      suspended: false,
      live_enabled: false,
      ...(bootstrap ? { bootstrap: true } : {}),
      created_at: this.clock(),
    };
    await this.repositories.organizations.insert(organization);
    return organization;
  }

  async updateOrganization(request: Pick<UpdateOrganizationRequest, "id" | "suspended" | "liveEnabled">): Promise<OrganizationDocument> {
    const changes: Partial<OrganizationDocument> = {};
    if (request.suspended !== undefined) changes.suspended = request.suspended;
    if (request.liveEnabled !== undefined) changes.live_enabled = request.liveEnabled;
    const updated = Object.keys(changes).length
      ? await this.repositories.organizations.update(request.id, changes)
      : await this.repositories.organizations.findById(request.id);
    if (!updated) throw svcError("organization_not_found");
    this.authenticator.invalidate();
    return updated;
  }

  async createProject(
    request: Pick<CreateProjectRequest, "organizationId" | "name" | "liveWalletsEnabled" | "livePhoneVerificationEnabled" | "liveKycEnabled">,
  ): Promise<ProjectDocument> {
    const organization = await this.repositories.organizations.findById(request.organizationId);
    if (!organization) throw svcError("organization_not_found");
    const project: ProjectDocument = {
      _id: newUuid(),
      organization_id: organization._id,
      name: requireName(request.name),
      live_wallets_enabled: request.liveWalletsEnabled ?? false,
      live_phone_verification_enabled: request.livePhoneVerificationEnabled ?? false,
      live_kyc_enabled: request.liveKycEnabled ?? false,
      created_at: this.clock(),
    };
    await this.repositories.projects.insert(project);
    return project;
  }

  async updateProject(
    request: Pick<UpdateProjectRequest, "id" | "liveWalletsEnabled" | "livePhoneVerificationEnabled" | "liveKycEnabled">,
  ): Promise<ProjectDocument> {
    const changes: ProjectChanges = {};
    if (request.liveWalletsEnabled !== undefined) changes.live_wallets_enabled = request.liveWalletsEnabled;
    if (request.livePhoneVerificationEnabled !== undefined) changes.live_phone_verification_enabled = request.livePhoneVerificationEnabled;
    if (request.liveKycEnabled !== undefined) changes.live_kyc_enabled = request.liveKycEnabled;
    const updated =
      Object.keys(changes).length > 0
        ? await this.repositories.projects.update(request.id, changes)
        : await this.repositories.projects.findById(request.id);
    if (!updated) throw svcError("project_not_found");
    return updated;
  }

  /** Creates a key, or adopts `secret` as is (bootstrap keys given by the operator). */
  async createApiKey(
    request: Pick<CreateApiKeyRequest, "projectId" | "livemode" | "rateLimit" | "name">,
    secret?: string,
  ): Promise<{ key: ApiKeyDocument; secret: string }> {
    const project = await this.repositories.projects.findById(request.projectId);
    if (!project) throw svcError("project_not_found");
    if (request.rateLimit !== undefined && request.rateLimit < 1) {
      throw validationError("rate_limit", "rate_limit must be at least 1.");
    }
    const name = request.name === undefined ? null : apiKeyNameOf(request.name);
    const keySecret = secret ?? generateApiKey(request.livemode);
    const key: ApiKeyDocument = {
      _id: newApiKeyId(),
      project_id: project._id,
      organization_id: project.organization_id,
      livemode: request.livemode,
      secret_hash: hashApiKey(keySecret),
      last4: keySecret.slice(-4),
      rate_limit: request.rateLimit ?? null,
      revoked_at: null,
      created_at: this.clock(),
      ...(name !== null ? { name } : {}),
    };
    await this.repositories.apiKeys.insert(key);
    return { key, secret: keySecret };
  }

  async revokeApiKey(id: string): Promise<ApiKeyDocument> {
    const key = await this.repositories.apiKeys.revoke(id, this.clock());
    if (!key) throw svcError("api_key_not_found");
    this.authenticator.invalidate();
    return key;
  }

  async getOrganization(id: string): Promise<OrganizationDocument> {
    const organization = await this.repositories.organizations.findById(id);
    if (!organization) throw svcError("organization_not_found");
    return organization;
  }

  async listOrganizations(request: ListRequest): Promise<Page<OrganizationDocument>> {
    const { organizations } = this.repositories;
    return organizations.list(await listWindow(listParameters(request), (id) => organizations.findById(id)));
  }

  async getProject(id: string): Promise<ProjectDocument> {
    const project = await this.repositories.projects.findById(id);
    if (!project) throw svcError("project_not_found");
    return project;
  }

  /** The cursor must be a project of the list (of the organization, when one is given). */
  async listProjects(request: ListRequest & { organizationId?: string | undefined }): Promise<Page<ProjectDocument>> {
    const { projects } = this.repositories;
    const parameters = listParameters(request);
    const inList = (project: ProjectDocument | null) =>
      project && (request.organizationId === undefined || project.organization_id === request.organizationId) ? project : null;
    return projects.list(request.organizationId, await listWindow(parameters, async (id) => inList(await projects.findById(id))));
  }

  async getApiKey(id: string): Promise<ApiKeyDocument> {
    const key = await this.repositories.apiKeys.findById(id);
    if (!key) throw svcError("api_key_not_found");
    return key;
  }

  async listApiKeys(request: ListRequest & { projectId?: string | undefined; livemode?: boolean | undefined }): Promise<Page<ApiKeyDocument>> {
    const { apiKeys } = this.repositories;
    const parameters = listParameters(request);
    const inList = (key: ApiKeyDocument | null) =>
      key &&
      (request.projectId === undefined || key.project_id === request.projectId) &&
      (request.livemode === undefined || key.livemode === request.livemode)
        ? key
        : null;
    const filters = { projectId: request.projectId, livemode: request.livemode };
    return apiKeys.list(filters, await listWindow(parameters, async (id) => inList(await apiKeys.findById(id))));
  }
}
