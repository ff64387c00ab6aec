// The Phone verification, KYC session and Kyc objects, field for field as docs/contract.md, Resources, lists them.
import type { KycSession, PhoneVerification } from "../../gen/svc/v1/identity_pb.ts";
import { isoTime, orNull, requiredIsoTime } from "./json-values.ts";

export function phoneVerificationJson(v: PhoneVerification): Record<string, unknown> {
  return {
    object: "phone_verification",
    user_id: v.userId,
    phone: v.phone,
    channel: v.channel,
    status: v.status,
    attempts_remaining: v.attemptsRemaining,
    expires_at: requiredIsoTime(v.expiresAt),
    resend_available_at: requiredIsoTime(v.resendAvailableAt),
    sends_remaining: v.sendsRemaining,
    livemode: v.livemode,
    created_at: requiredIsoTime(v.createdAt),
    updated_at: requiredIsoTime(v.updatedAt),
  };
}

export function kycSessionJson(s: KycSession): Record<string, unknown> {
  return {
    id: s.id,
    object: "kyc_session",
    user_id: s.userId,
    status: s.status,
    url: s.url,
    return_url: orNull(s.returnUrl),
    expires_at: requiredIsoTime(s.expiresAt),
    last_error: s.lastError ? { code: s.lastError.code, reason: orNull(s.lastError.reason) } : null,
    livemode: s.livemode,
    created_at: requiredIsoTime(s.createdAt),
    updated_at: isoTime(s.updatedAt) ?? requiredIsoTime(s.createdAt),
  };
}

/** The Kyc object of `kyc.*` events: `status` is the user's new kyc_status. */
export interface KycJson {
  object: "kyc";
  user_id: string;
  status: string;
  livemode: boolean;
}

export function kycJson(userId: string, kycStatus: string, livemode: boolean): KycJson {
  return { object: "kyc", user_id: userId, status: kycStatus, livemode };
}
