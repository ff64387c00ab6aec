// svc.admin.v1.AdminService: internal administration over Connect and gRPC (never under /v1).
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  AdminService,
  CreateApiKeyResponseSchema,
  CreateOrganizationResponseSchema,
  CreateProjectResponseSchema,
  PublishEventResponseSchema,
  PublishSignupFlowResponseSchema,
  RecordKycDecisionResponseSchema,
  RevokeApiKeyResponseSchema,
  SuspendUserResponseSchema,
  UnsuspendUserResponseSchema,
  UpdateOrganizationResponseSchema,
  UpdateProjectResponseSchema,
  type CreateApiKeyRequest,
  type CreateOrganizationRequest,
  type CreateProjectRequest,
  type PublishEventRequest,
  type PublishSignupFlowRequest,
  type RecordKycDecisionRequest,
  type RevokeApiKeyRequest,
  type SuspendUserRequest,
  type UnsuspendUserRequest,
  type UpdateOrganizationRequest,
  type UpdateProjectRequest,
} from "../../gen/svc/admin/v1/admin_pb.ts";
import type { Clock } from "../domain/clock.ts";
import { svcError, validationError } from "../domain/errors.ts";
import { checkPublishedObject } from "../domain/event-objects.ts";
import type { EventType } from "../domain/event-types.ts";
import { buildSignupFlow } from "../domain/signup-flow.ts";
import { publishedEvent } from "../events/event-factory.ts";
import type { ProjectRepository } from "../store/project-repository.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";
import type { UserRepository } from "../store/user-repository.ts";
import { eventMessage } from "../messages/event-messages.ts";
import type { EventRelay } from "../events/event-relay.ts";
import { apiKeyMessage, organizationMessage, projectMessage } from "../messages/tenancy-messages.ts";
import type { TenancyAdmin } from "./tenancy-admin.ts";
import type { TenantSettings } from "./tenant-settings.ts";
import type { UserLifecycle } from "./user-lifecycle.ts";
import type { KycLifecycle } from "./kyc-lifecycle.ts";
import { checkRejectionReason } from "../domain/kyc.ts";
import { kycSessionMessage } from "../messages/identity-messages.ts";
import { signupConfigMessage, userMessage } from "../messages/user-messages.ts";

export interface AdminServiceDependencies {
  tenancy: TenancyAdmin;
  projects: ProjectRepository;
  users: UserRepository;
  settings: TenantSettings;
  lifecycle: UserLifecycle;
  kyc: KycLifecycle;
  relay: EventRelay;
  clock: Clock;
}

export class AdminServiceImpl implements ServiceImpl<typeof AdminService> {
  constructor(private readonly deps: AdminServiceDependencies) {}

  async createOrganization(request: CreateOrganizationRequest) {
    return create(CreateOrganizationResponseSchema, { organization: organizationMessage(await this.deps.tenancy.createOrganization(request)) });
  }

  async updateOrganization(request: UpdateOrganizationRequest) {
    return create(UpdateOrganizationResponseSchema, { organization: organizationMessage(await this.deps.tenancy.updateOrganization(request)) });
  }

  async createProject(request: CreateProjectRequest) {
    return create(CreateProjectResponseSchema, { project: projectMessage(await this.deps.tenancy.createProject(request)) });
  }

  async updateProject(request: UpdateProjectRequest) {
    const project = await this.deps.tenancy.updateProject(request);
    this.deps.settings.projectChanged();
    return create(UpdateProjectResponseSchema, { project: projectMessage(project) });
  }

  async createApiKey(request: CreateApiKeyRequest) {
    const { key, secret } = await this.deps.tenancy.createApiKey(request);
    return create(CreateApiKeyResponseSchema, { apiKey: apiKeyMessage(key), secret });
  }

  async revokeApiKey(request: RevokeApiKeyRequest) {
    return create(RevokeApiKeyResponseSchema, { apiKey: apiKeyMessage(await this.deps.tenancy.revokeApiKey(request.id)) });
  }

  async publishSignupFlow(request: PublishSignupFlowRequest) {
    const scope = await this.scopeOf(request.projectId, request.livemode);
    const flow = buildSignupFlow(
      {
        modules: request.modules.map(({ name, enabled, required }) => ({ name, enabled, required })),
        ...(request.minAge !== undefined ? { minAge: request.minAge } : {}),
        allowedCountries: request.allowedCountries,
      },
      this.deps.clock(),
    );
    await this.deps.settings.publishSignupFlow(scope, flow);
    return create(PublishSignupFlowResponseSchema, { signupConfig: signupConfigMessage(flow) });
  }

  async suspendUser(request: SuspendUserRequest) {
    const user = await this.deps.lifecycle.setSuspended(await this.scopeOf(request.projectId, request.livemode), request.userId, true);
    return create(SuspendUserResponseSchema, { user: userMessage(user) });
  }

  async unsuspendUser(request: UnsuspendUserRequest) {
    const user = await this.deps.lifecycle.setSuspended(await this.scopeOf(request.projectId, request.livemode), request.userId, false);
    return create(UnsuspendUserResponseSchema, { user: userMessage(user) });
  }

  async publishEvent(request: PublishEventRequest) {
    const scope = await this.scopeOf(request.projectId, request.livemode);
    const object = checkPublishedObject(request.type, request.object ?? {}, request.livemode);
    if (typeof object.user_id === "string" && !(await this.deps.users.find(scope, object.user_id))) {
      throw svcError("user_not_found");
    }
    // checkPublishedObject accepts only types it has a table for.
    const event = publishedEvent(scope, request.type as EventType, object, this.deps.clock());
    await this.deps.relay.publish(event);
    return create(PublishEventResponseSchema, { event: eventMessage(event) });
  }

  /** A live provider's decision on a session (requires_input or processing, else 409 invalid_state). */
  async recordKycDecision(request: RecordKycDecisionRequest) {
    if (request.decision !== "approved" && request.decision !== "rejected") {
      throw validationError("decision", "decision must be approved or rejected.");
    }
    const reason = checkRejectionReason(request.reason);
    const { user, session } = await this.deps.kyc.move(null, request.sessionId, request.decision === "approved" ? "approve" : "reject", reason);
    return create(RecordKycDecisionResponseSchema, { kycSession: kycSessionMessage(user, session) });
  }

  private async scopeOf(projectId: string, livemode: boolean): Promise<TenantScope> {
    if (!(await this.deps.projects.findById(projectId))) throw svcError("project_not_found");
    return { projectId, livemode };
  }
}
