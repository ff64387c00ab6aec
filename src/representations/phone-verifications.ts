// The Phone verification object (docs/contract.md, Resources) and its request bodies: schemas, examples, presenter.
import type { PhoneVerification } from "../../gen/svc/v1/identity_pb.ts";
import { USER_ID_PATTERN } from "../domain/ids.ts";
import {
  VERIFICATION_CHANNELS,
  VERIFICATION_CODE_PATTERN,
  VERIFICATION_MAX_ATTEMPTS,
  VERIFICATION_SENDS_PER_HOUR,
} from "../domain/phone-verification.ts";
import { PHONE_PATTERN } from "../domain/profile-rules.ts";
import { UPDATED_AT, USER_ID } from "./example-values.ts";
import { closedObject, constant, dateTime, named, type Static, stringEnum, Type } from "./json-schema.ts";
import { requiredIsoTime } from "./json-values.ts";

export const phoneVerificationSchema = closedObject(
  {
    object: constant("phone_verification"),
    user_id: Type.String({ pattern: USER_ID_PATTERN.source }),
    phone: Type.String({ pattern: PHONE_PATTERN.source }),
    channel: stringEnum(VERIFICATION_CHANNELS),
    status: stringEnum(["pending", "approved", "expired", "max_attempts_reached", "canceled"]),
    attempts_remaining: Type.Integer({ minimum: 0, maximum: VERIFICATION_MAX_ATTEMPTS, description: "Wrong checks the current code still allows." }),
    expires_at: dateTime("The code's end of validity (10 minutes after it was issued)."),
    resend_available_at: dateTime("When the next send is allowed (30 s after the last; later when the hourly limit is reached)."),
    sends_remaining: Type.Integer({ minimum: 0, maximum: VERIFICATION_SENDS_PER_HOUR, description: "Sends left in the rolling hour." }),
    livemode: Type.Boolean(),
    created_at: dateTime("When the current code was issued."),
    updated_at: dateTime(),
  },
  { description: "The latest phone verification of a user. The code itself is never answered." },
);
type PhoneVerificationJson = Static<typeof phoneVerificationSchema>;

const PENDING: PhoneVerificationJson = {
  object: "phone_verification",
  user_id: USER_ID,
  phone: "+14155550123",
  channel: "sms",
  status: "pending",
  attempts_remaining: 5,
  expires_at: "2026-11-20T09:25:41.208Z",
  resend_available_at: "2026-11-20T09:16:11.208Z",
  sends_remaining: 4,
  livemode: false,
  created_at: UPDATED_AT,
  updated_at: UPDATED_AT,
};
named("PhoneVerification", phoneVerificationSchema, [PENDING]);
/** A verification in the state a successful check leaves it. */
export const APPROVED_PHONE_VERIFICATION_EXAMPLE: PhoneVerificationJson = { ...PENDING, status: "approved" };

export const startPhoneVerificationRequestSchema = closedObject({
  channel: Type.Optional(stringEnum(VERIFICATION_CHANNELS, { default: "sms" })),
});
named("StartPhoneVerificationRequest", startPhoneVerificationRequestSchema, [{ channel: "sms" }]);

export const checkPhoneVerificationRequestSchema = closedObject({
  code: Type.String({ pattern: VERIFICATION_CODE_PATTERN.source, description: "The 6-digit code (sandbox: 000000)." }),
});
named("CheckPhoneVerificationRequest", checkPhoneVerificationRequestSchema, [{ code: "000000" }]);

export function phoneVerificationJson(v: PhoneVerification): PhoneVerificationJson {
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
