// svc.admin.v1.AdminService: internal administration over Connect and gRPC (never under /v1).
import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  GetApiKeyResponseSchema,
  GetOrganizationResponseSchema,
  GetProjectResponseSchema,
  ListApiKeysResponseSchema,
  ListOrganizationsResponseSchema,
  ListProjectsResponseSchema,
  type GetApiKeyRequest,
  type GetOrganizationRequest,
  type GetProjectRequest,
  type ListApiKeysRequest,
  type ListOrganizationsRequest,
  type ListProjectsRequest,
  type AdminService,
  CreateApiKeyResponseSchema,
  CreateOrganizationResponseSchema,
  CreateProjectResponseSchema,
  PublishEventResponseSchema,
  RecordDepositResponseSchema,
  SettleTransactionResponseSchema,
  type RecordDepositRequest,
  type SettleTransactionRequest,
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
import { reservationOf } from "../access/creation-reservation.ts";
import type { Clock } from "../domain/clock.ts";
import { USER_ID_PATTERN } from "../domain/ids.ts";
import { depositFingerprint } from "../domain/deposit-fingerprint.ts";
import { failureCodeOf, givenCents, WITHDRAWAL_FEE_FIELDS } from "../domain/money.ts";
import { derivedTransactionId, moveMarkOf } from "../domain/reserved-ids.ts";
import { codePointLength } from "../domain/text.ts";
import type { Ledger } from "../ledger/ledger.ts";
import { transactionMessage } from "../messages/transaction-messages.ts";
import { depositMoney, newTransaction } from "./transactions-service.ts";
import { describeError, svcError, validationError } from "../domain/errors.ts";
import { checkPublishedObject } from "../domain/event-objects.ts";
import type { EventType } from "../domain/event-types.ts";
import { buildSignupFlow } from "../domain/signup-flow.ts";
import { publishedEvent } from "../events/event-factory.ts";
import type { ProjectRepository } from "../store/project-repository.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";
import type { TransactionRecord, TransactionRepository } from "../store/transaction-repository.ts";
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
  ledger: Ledger;
  tenancy: TenancyAdmin;
  projects: ProjectRepository;
  users: UserRepository;
  transactions: TransactionRepository;
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

  async getOrganization(request: GetOrganizationRequest) {
    return create(GetOrganizationResponseSchema, { organization: organizationMessage(await this.deps.tenancy.getOrganization(request.id)) });
  }

  async listOrganizations(request: ListOrganizationsRequest) {
    const page = await this.deps.tenancy.listOrganizations(request);
    return create(ListOrganizationsResponseSchema, { data: page.items.map(organizationMessage), hasMore: page.hasMore });
  }

  async getProject(request: GetProjectRequest) {
    return create(GetProjectResponseSchema, { project: projectMessage(await this.deps.tenancy.getProject(request.id)) });
  }

  async listProjects(request: ListProjectsRequest) {
    const page = await this.deps.tenancy.listProjects(request);
    return create(ListProjectsResponseSchema, { data: page.items.map(projectMessage), hasMore: page.hasMore });
  }

  async getApiKey(request: GetApiKeyRequest) {
    return create(GetApiKeyResponseSchema, { apiKey: apiKeyMessage(await this.deps.tenancy.getApiKey(request.id)) });
  }

  async listApiKeys(request: ListApiKeysRequest) {
    const page = await this.deps.tenancy.listApiKeys(request);
    return create(ListApiKeysResponseSchema, { data: page.items.map(apiKeyMessage), hasMore: page.hasMore });
  }

  async updateOrganization(request: UpdateOrganizationRequest) {
    return create(UpdateOrganizationResponseSchema, { organization: organizationMessage(await this.deps.tenancy.updateOrganization(request)) });
  }

  async createProject(request: CreateProjectRequest) {
    const fee = withdrawalFeeOf(request);
    let project = await this.deps.tenancy.createProject(request);
    if (fee !== undefined) project = (await this.deps.projects.setWithdrawalFee(project._id, fee)) ?? project;
    return create(CreateProjectResponseSchema, { project: projectMessage(project) });
  }

  async updateProject(request: UpdateProjectRequest) {
    const fee = withdrawalFeeOf(request);
    let project = await this.deps.tenancy.updateProject(request);
    if (fee !== undefined) project = (await this.deps.projects.setWithdrawalFee(project._id, fee)) ?? project;
    this.deps.settings.projectChanged();
    return create(UpdateProjectResponseSchema, { project: projectMessage(project) });
  }

  /**
   * A deposit a provider reported. Its reference (per project and environment) is its idempotency key: the same
   * reference with the same request (user, amounts, currency) answers the same transaction; with another, 422
   * idempotency_key_reuse. The first request takes the reference before the deposit is opened, so of concurrent
   * requests for different users only one can open it.
   */
  async recordDeposit(request: RecordDepositRequest) {
    const money = depositMoney(request);
    if (request.reference.length === 0 || codePointLength(request.reference) > 255) {
      throw validationError("reference", "reference must be 1 to 255 characters.");
    }
    const scope = await this.scopeOf(request.projectId, request.livemode);
    if (!USER_ID_PATTERN.test(request.userId)) throw svcError("user_not_found");
    const now = this.deps.clock();
    const record = newTransaction(
      scope,
      derivedTransactionId(`${scope.projectId}|${scope.livemode}|${request.reference}`, "reference"),
      {
        user_id: request.userId,
        type: "deposit",
        ...money,
        description: null,
        simulated: false,
        reference: request.reference,
      },
      now,
    );
    const fingerprint = depositFingerprint(record);
    const reuse = () =>
      svcError("idempotency_key_reuse", "This reference was recorded for another deposit (user, amount, fee or currency).", { param: "reference" });
    // A deposit recorded before references were taken has no holder: its stored fields say what it was.
    const existing = await this.deps.ledger.find(record.id);
    if (existing && depositFingerprint(existing) !== fingerprint) throw reuse();
    if (!existing && (await this.deps.transactions.takeReference(record.id, fingerprint, now)) !== fingerprint) throw reuse();
    let opened: TransactionRecord;
    try {
      opened = await this.deps.ledger.open(scope, record, { firstStepAt: null, mayExist: true });
    } catch (error) {
      // Refused (404, 409) with nothing opened: the reference is free again for a corrected request.
      if (!existing && describeError(error).definition.status < 500 && !(await this.deps.ledger.find(record.id))) {
        await this.deps.transactions.releaseReference(record.id, fingerprint);
      }
      throw error;
    }
    if (depositFingerprint(opened) !== fingerprint) throw reuse();
    return create(RecordDepositResponseSchema, { transaction: transactionMessage(opened) });
  }

  /** A provider's outcome for a pending or processing transaction (else 409 invalid_state). */
  async settleTransaction(request: SettleTransactionRequest, context: HandlerContext) {
    if (request.outcome !== "completed" && request.outcome !== "failed") throw validationError("outcome", "outcome must be completed or failed.");
    const failed =
      request.outcome === "failed"
        ? { failure: { code: failureCodeOf(request.failureCode ?? "failed"), message: "The provider reported a failure." } }
        : {};
    const record = await this.deps.ledger.move(request.id, request.outcome === "completed" ? "complete" : "fail", {
      scope: null,
      ...failed,
      mark: moveMarkOf(reservationOf(context), `transaction:settle:${request.outcome}`),
    });
    return create(SettleTransactionResponseSchema, { transaction: transactionMessage(record) });
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

  async suspendUser(request: SuspendUserRequest, context: HandlerContext) {
    const scope = await this.scopeOf(request.projectId, request.livemode);
    const user = await this.deps.lifecycle.setSuspended(scope, request.userId, true, moveMarkOf(reservationOf(context), "user:suspend"));
    return create(SuspendUserResponseSchema, { user: userMessage(user) });
  }

  async unsuspendUser(request: UnsuspendUserRequest, context: HandlerContext) {
    const scope = await this.scopeOf(request.projectId, request.livemode);
    const user = await this.deps.lifecycle.setSuspended(scope, request.userId, false, moveMarkOf(reservationOf(context), "user:unsuspend"));
    return create(UnsuspendUserResponseSchema, { user: userMessage(user) });
  }

  async publishEvent(request: PublishEventRequest) {
    // The ledger emits every money event from the state change it reports: none may be injected.
    if (/^(transaction|withdrawal)\./.test(request.type)) {
      throw validationError(
        "type",
        `${request.type} events are emitted by the ledger (RecordDeposit, SettleTransaction, withdrawals); they cannot be published.`,
      );
    }
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
  async recordKycDecision(request: RecordKycDecisionRequest, context: HandlerContext) {
    if (request.decision !== "approved" && request.decision !== "rejected") {
      throw validationError("decision", "decision must be approved or rejected.");
    }
    const reason = checkRejectionReason(request.reason);
    const move = request.decision === "approved" ? "approve" : "reject";
    const { user, session } = await this.deps.kyc.move(null, request.sessionId, move, reason, moveMarkOf(reservationOf(context), `kyc:${move}`));
    return create(RecordKycDecisionResponseSchema, { kycSession: kycSessionMessage(user, session) });
  }

  private async scopeOf(projectId: string, livemode: boolean): Promise<TenantScope> {
    if (!(await this.deps.projects.findById(projectId))) throw svcError("project_not_found");
    return { projectId, livemode };
  }
}

/** A project's withdrawal fee as a creation or update gives it (exact or in deprecated dollars), or undefined. */
function withdrawalFeeOf(request: CreateProjectRequest | UpdateProjectRequest): number | undefined {
  if (request.withdrawalFeeCents === undefined && request.withdrawalFeeUsd === undefined) return undefined;
  return givenCents(WITHDRAWAL_FEE_FIELDS, request.withdrawalFeeCents, request.withdrawalFeeUsd, { min: 0 }).cents;
}
