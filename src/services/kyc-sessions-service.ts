// svc.v1.KycSessionsService and svc.v1.SandboxService: the public face of KYC sessions (create, retrieve, list,
// cancel) and the sandbox drivers that move them as a provider would. Live keys never reach SandboxService:
// its methods are sandbox-only in their API descriptions (403 sandbox_only before anything else).
import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  ApproveKycSessionResponseSchema,
  CancelKycSessionResponseSchema,
  CreateKycSessionResponseSchema,
  GetKycSessionResponseSchema,
  type KycSessionsService,
  ListUserKycSessionsResponseSchema,
  RejectKycSessionResponseSchema,
  type SandboxService,
  SubmitKycSessionResponseSchema,
  type ApproveKycSessionRequest,
  type CancelKycSessionRequest,
  type CreateKycSessionRequest,
  type GetKycSessionRequest,
  type ListUserKycSessionsRequest,
  type RejectKycSessionRequest,
  type SubmitKycSessionRequest,
} from "../../gen/svc/v1/identity_pb.ts";
import { reservationOf } from "../access/creation-reservation.ts";
import { tenantOf } from "../access/principal.ts";
import { checkRejectionReason, checkReturnUrl } from "../domain/kyc.ts";
import { moveMarkOf, reservedKycSessionId } from "../domain/reserved-ids.ts";
import { kycSessionMessage } from "../messages/identity-messages.ts";
import type { KycLifecycle } from "./kyc-lifecycle.ts";
import { listParameters, pageInMemory } from "./pagination.ts";

export class KycSessionsServiceImpl implements ServiceImpl<typeof KycSessionsService> {
  constructor(private readonly kyc: KycLifecycle) {}

  async createKycSession(request: CreateKycSessionRequest, context: HandlerContext) {
    const scope = tenantOf(context);
    const returnUrl = request.returnUrl !== undefined ? checkReturnUrl(request.returnUrl, scope.livemode) : null;
    const reservation = reservationOf(context);
    const reserved = reservation ? { id: reservedKycSessionId(reservation.seed), resumed: reservation.resumed } : null;
    const { user, session } = await this.kyc.create(scope, request.userId, returnUrl, reserved);
    return create(CreateKycSessionResponseSchema, { kycSession: kycSessionMessage(user, session) });
  }

  async getKycSession(request: GetKycSessionRequest, context: HandlerContext) {
    const { user, session } = await this.kyc.find(tenantOf(context), request.id);
    return create(GetKycSessionResponseSchema, { kycSession: kycSessionMessage(user, session) });
  }

  async listUserKycSessions(request: ListUserKycSessionsRequest, context: HandlerContext) {
    const parameters = listParameters(request);
    const { user, sessions } = await this.kyc.sessionsOf(tenantOf(context), request.userId);
    const page = pageInMemory(
      sessions.map((s) => kycSessionMessage(user, s)),
      parameters,
      (session) => timestampDate(session.createdAt!),
    );
    return create(ListUserKycSessionsResponseSchema, { data: page.items, hasMore: page.hasMore });
  }

  async cancelKycSession(request: CancelKycSessionRequest, context: HandlerContext) {
    const { user, session } = await this.kyc.move(tenantOf(context), request.id, "cancel", null, moveMarkOf(reservationOf(context), "kyc:cancel"));
    return create(CancelKycSessionResponseSchema, { kycSession: kycSessionMessage(user, session) });
  }
}

export class SandboxServiceImpl implements ServiceImpl<typeof SandboxService> {
  constructor(private readonly kyc: KycLifecycle) {}

  async submitKycSession(request: SubmitKycSessionRequest, context: HandlerContext) {
    const { user, session } = await this.kyc.move(tenantOf(context), request.id, "submit", null, moveMarkOf(reservationOf(context), "kyc:submit"));
    return create(SubmitKycSessionResponseSchema, { kycSession: kycSessionMessage(user, session) });
  }

  async approveKycSession(request: ApproveKycSessionRequest, context: HandlerContext) {
    const { user, session } = await this.kyc.move(tenantOf(context), request.id, "approve", null, moveMarkOf(reservationOf(context), "kyc:approve"));
    return create(ApproveKycSessionResponseSchema, { kycSession: kycSessionMessage(user, session) });
  }

  async rejectKycSession(request: RejectKycSessionRequest, context: HandlerContext) {
    const reason = checkRejectionReason(request.reason);
    const { user, session } = await this.kyc.move(tenantOf(context), request.id, "reject", reason, moveMarkOf(reservationOf(context), "kyc:reject"));
    return create(RejectKycSessionResponseSchema, { kycSession: kycSessionMessage(user, session) });
  }
}
