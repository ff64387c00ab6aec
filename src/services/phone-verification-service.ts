// svc.v1.PhoneVerificationService: start (or resend), check and read a user's phone verification. The
// verification lives in the user document: each send, each counted attempt and the approval (with the user's
// `verified`) is one conditional update of that document, so concurrent requests are counted exactly.
import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  CheckPhoneVerificationResponseSchema,
  GetPhoneVerificationResponseSchema,
  type PhoneVerificationService,
  StartPhoneVerificationResponseSchema,
  type CheckPhoneVerificationRequest,
  type GetPhoneVerificationRequest,
  type StartPhoneVerificationRequest,
} from "../../gen/svc/v1/identity_pb.ts";
import { reservationOf } from "../access/creation-reservation.ts";
import { tenantOf } from "../access/principal.ts";
import type { Clock } from "../domain/clock.ts";
import { svcError, validationError } from "../domain/errors.ts";
import { USER_ID_PATTERN } from "../domain/ids.ts";
import {
  checkRefusal,
  planSend,
  SANDBOX_UNAVAILABLE_PHONE_SUFFIX,
  SANDBOX_VERIFICATION_CODE,
  sendsInWindow,
  VERIFICATION_CHANNELS,
  VERIFICATION_CODE_PATTERN,
  VERIFICATION_CODE_VALIDITY_MS,
  VERIFICATION_MAX_ATTEMPTS,
  VERIFICATION_UNAVAILABLE_RETRY_AFTER_S,
  type StoredVerification,
  type VerificationCodes,
  wrongCodeError,
} from "../domain/phone-verification.ts";
import { newUuid } from "../domain/random.ts";
import { moveMarkOf } from "../domain/reserved-ids.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";
import { CHANGED, compareAndSet } from "../lib/compare-and-set.ts";
import { verificationMessage, type SmsSender } from "../identity/sms-sender.ts";
import { phoneVerificationMessage } from "../messages/identity-messages.ts";
import type { UserDocument } from "../store/user-document.ts";
import type { UserRepository } from "../store/user-repository.ts";

export interface PhoneVerificationDependencies {
  users: UserRepository;
  sms: SmsSender;
  codes: VerificationCodes;
  clock: Clock;
  /** How long one SMS send may take before it counts as failed. */
  smsTimeoutMs?: number;
}

function unavailable(): Error {
  return svcError("verification_unavailable", undefined, { metadata: { retry_after: String(VERIFICATION_UNAVAILABLE_RETRY_AFTER_S) } });
}

/** The filter that holds while the verification is as it was read. */
function verificationAsRead(current: StoredVerification | null) {
  return current ? { "phone_verification.rev": current.rev } : { phone_verification: { $exists: false } };
}

export class PhoneVerificationServiceImpl implements ServiceImpl<typeof PhoneVerificationService> {
  constructor(private readonly deps: PhoneVerificationDependencies) {}

  async startPhoneVerification(request: StartPhoneVerificationRequest, context: HandlerContext) {
    const scope = tenantOf(context);
    if (request.channel !== undefined && !(VERIFICATION_CHANNELS as readonly string[]).includes(request.channel)) {
      throw validationError("channel", `channel must be one of ${VERIFICATION_CHANNELS.join(", ")}.`);
    }
    const found = await this.findUser(scope, request.userId);
    if (scope.livemode && found.verified) throw svcError("already_verified");
    // Another request sent or checked in between: decide again from what it left.
    const read = (attempt: number) => (attempt === 0 ? found : this.findUser(scope, request.userId));
    return compareAndSet(`verification send to user ${request.userId}`, read, async (user) => {
      const now = this.deps.clock();
      const current = user.phone_verification ?? null;
      const plan = planSend(current, user.verification_sends ?? [], now);
      // Sandbox rehearsal of a provider outage: nothing is sent, nothing is used up.
      if (!scope.livemode && user.phone.endsWith(SANDBOX_UNAVAILABLE_PHONE_SUFFIX)) throw unavailable();
      const next: StoredVerification =
        plan.kind === "resend" && current
          ? { ...current, last_sent_at: now, updated_at: now, rev: current.rev + 1 }
          : this.newVerification(scope, now, (current?.rev ?? 0) + 1);
      const sends = [...sendsInWindow(user.verification_sends ?? [], now), now];
      const updated = await this.deps.users.update(
        scope,
        user._id,
        { $set: { phone_verification: next, verification_sends: sends } },
        verificationAsRead(current),
      );
      if (!updated) return CHANGED;
      if (scope.livemode) await this.sendCode(updated, next, user);
      return create(StartPhoneVerificationResponseSchema, { phoneVerification: phoneVerificationMessage(updated, next, now) });
    });
  }

  async checkPhoneVerification(request: CheckPhoneVerificationRequest, context: HandlerContext) {
    const scope = tenantOf(context);
    // A malformed code uses no attempt.
    if (!VERIFICATION_CODE_PATTERN.test(request.code)) throw validationError("code", "code must be six digits.");
    const found = await this.findUser(scope, request.userId);
    const mark = moveMarkOf(reservationOf(context), "approve_phone_verification");
    // A retry of a check that approved the code and then died (or failed with a 5xx) before answering.
    if (mark?.resumed && found.phone_verification?.status === "approved" && found.phone_verification.approved_by === mark.stamp) {
      return create(CheckPhoneVerificationResponseSchema, {
        phoneVerification: phoneVerificationMessage(found, found.phone_verification, this.deps.clock()),
      });
    }
    // A live user verified by this flow has its approved verification: further checks are no_pending_verification.
    if (scope.livemode && found.verified && found.phone_verification?.status !== "approved") throw svcError("already_verified");
    // Approved, used up or replaced in between: answer from what is stored now.
    const read = (attempt: number) => (attempt === 0 ? found : this.findUser(scope, request.userId));
    return compareAndSet(`verification check of user ${request.userId}`, read, async (user) => {
      const now = this.deps.clock();
      const current = user.phone_verification ?? null;
      const refusal = checkRefusal(current, now);
      if (refusal) throw refusal;
      const verification = current!;
      // Only a code still pending, unexpired and with attempts left may be approved or counted.
      const open = {
        "phone_verification.id": verification.id,
        "phone_verification.status": "pending",
        "phone_verification.attempts_remaining": { $gt: 0 },
        "phone_verification.expires_at": { $gt: now },
      };
      if (this.deps.codes.matches(verification, request.code)) {
        const updated = await this.deps.users.update(
          scope,
          user._id,
          {
            $set: {
              "phone_verification.status": "approved",
              "phone_verification.updated_at": now,
              ...(mark ? { "phone_verification.approved_by": mark.stamp } : {}),
              verified: true,
              updated_at: now,
            },
            $inc: { "phone_verification.rev": 1 },
          },
          open,
        );
        if (updated) {
          return create(CheckPhoneVerificationResponseSchema, {
            phoneVerification: phoneVerificationMessage(updated, updated.phone_verification!, now),
          });
        }
      } else {
        const updated = await this.deps.users.update(
          scope,
          user._id,
          { $set: { "phone_verification.updated_at": now }, $inc: { "phone_verification.attempts_remaining": -1, "phone_verification.rev": 1 } },
          open,
        );
        if (updated) throw wrongCodeError(updated.phone_verification!.attempts_remaining);
      }
      return CHANGED;
    });
  }

  async getPhoneVerification(request: GetPhoneVerificationRequest, context: HandlerContext) {
    const scope = tenantOf(context);
    const user = await this.findUser(scope, request.userId);
    if (!user.phone_verification) throw svcError("no_pending_verification", "No verification was started for this user.");
    return create(GetPhoneVerificationResponseSchema, {
      phoneVerification: phoneVerificationMessage(user, user.phone_verification, this.deps.clock()),
    });
  }

  private newVerification(scope: TenantScope, now: Date, rev: number): StoredVerification {
    const id = newUuid();
    const nonce = this.deps.codes.newNonce();
    const code = scope.livemode ? this.deps.codes.liveCode(nonce) : SANDBOX_VERIFICATION_CODE;
    return {
      id,
      channel: "sms",
      status: "pending",
      attempts_remaining: VERIFICATION_MAX_ATTEMPTS,
      code_nonce: nonce,
      code_hmac: this.deps.codes.hmac(id, code),
      expires_at: new Date(now.getTime() + VERIFICATION_CODE_VALIDITY_MS),
      last_sent_at: now,
      created_at: now,
      updated_at: now,
      rev,
    };
  }

  /**
   * Sends the code of a recorded send. If the provider fails, the send is taken back (when nothing else was
   * written since), so nothing is used up, and the call answers 503.
   */
  private async sendCode(updated: UserDocument, sent: StoredVerification, before: UserDocument): Promise<void> {
    try {
      await this.deps.sms.send(
        { to: updated.phone, body: verificationMessage(this.deps.codes.liveCode(sent.code_nonce)) },
        AbortSignal.timeout(this.deps.smsTimeoutMs ?? 10_000),
      );
    } catch {
      const restore = before.phone_verification
        ? { $set: { phone_verification: before.phone_verification, verification_sends: before.verification_sends ?? [] } }
        : { $set: { verification_sends: before.verification_sends ?? [] }, $unset: { phone_verification: "" as const } };
      await this.deps.users.update({ projectId: updated.project_id, livemode: updated.livemode }, updated._id, restore, {
        "phone_verification.rev": sent.rev,
      });
      throw unavailable();
    }
  }

  /** Unknown, malformed, or of another project or environment: all the same 404. */
  private async findUser(scope: TenantScope, id: string): Promise<UserDocument> {
    const user = USER_ID_PATTERN.test(id) ? await this.deps.users.find(scope, id) : null;
    if (!user) throw svcError("user_not_found");
    return user;
  }
}
