// Phone verifications and KYC sessions stored in user documents, as the public messages.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  KycSessionErrorSchema,
  KycSessionSchema,
  PhoneVerificationSchema,
  type KycSession,
  type PhoneVerification,
} from "../../gen/svc/v1/identity_pb.ts";
import type { StoredKycSession } from "../domain/kyc.ts";
import { effectiveStatus, nextSendAt, sendsRemaining, type StoredVerification } from "../domain/phone-verification.ts";
import type { UserDocument } from "../store/user-document.ts";

/** The verification as a client sees it at `now` (derived statuses, sends left in the rolling hour). */
export function phoneVerificationMessage(user: UserDocument, v: StoredVerification, now: Date): PhoneVerification {
  const sends = user.verification_sends ?? [];
  return create(PhoneVerificationSchema, {
    userId: user._id,
    phone: user.phone,
    channel: v.channel,
    status: effectiveStatus(v, now),
    attemptsRemaining: Math.max(0, v.attempts_remaining),
    expiresAt: timestampFromDate(v.expires_at),
    resendAvailableAt: timestampFromDate(nextSendAt(sends, now)),
    sendsRemaining: sendsRemaining(sends, now),
    livemode: user.livemode,
    createdAt: timestampFromDate(v.created_at),
    updatedAt: timestampFromDate(v.updated_at),
  });
}

export function kycSessionMessage(user: Pick<UserDocument, "_id" | "livemode">, s: StoredKycSession): KycSession {
  return create(KycSessionSchema, {
    id: s.id,
    userId: user._id,
    status: s.status,
    url: s.url,
    ...(s.return_url !== null ? { returnUrl: s.return_url } : {}),
    expiresAt: timestampFromDate(s.expires_at),
    ...(s.last_error
      ? {
          lastError: create(KycSessionErrorSchema, {
            code: s.last_error.code,
            ...(s.last_error.reason !== null ? { reason: s.last_error.reason } : {}),
          }),
        }
      : {}),
    livemode: user.livemode,
    createdAt: timestampFromDate(s.created_at),
    updatedAt: timestampFromDate(s.updated_at),
  });
}
