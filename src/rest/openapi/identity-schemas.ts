// Schemas of phone verification and KYC sessions (docs/contract.md, "Phone verification" and "KYC sessions"),
// with the limits the rules enforce, imported from the rules themselves.
import { USER_ID_PATTERN } from "../../domain/ids.ts";
import { KYC_REJECTION_REASON_MAX_LENGTH, KYC_RETURN_URL_MAX_LENGTH, KYC_SESSION_ID_PATTERN, KYC_SESSION_STATUSES } from "../../domain/kyc.ts";
import {
  VERIFICATION_CHANNELS,
  VERIFICATION_CODE_PATTERN,
  VERIFICATION_MAX_ATTEMPTS,
  VERIFICATION_SENDS_PER_HOUR,
} from "../../domain/phone-verification.ts";
import { PHONE_PATTERN } from "../../domain/profile-rules.ts";
import { closedObject, DATE_TIME, listOf, nullable, type JsonSchema } from "./json-schema.ts";

export const identitySchemas: Record<string, JsonSchema> = {
  PhoneVerification: closedObject(
    {
      object: { const: "phone_verification" },
      user_id: { type: "string", pattern: USER_ID_PATTERN.source },
      phone: { type: "string", pattern: PHONE_PATTERN.source },
      channel: { type: "string", enum: [...VERIFICATION_CHANNELS] },
      status: { type: "string", enum: ["pending", "approved", "expired", "max_attempts_reached", "canceled"] },
      attempts_remaining: {
        type: "integer",
        minimum: 0,
        maximum: VERIFICATION_MAX_ATTEMPTS,
        description: "Wrong checks the current code still allows.",
      },
      expires_at: { ...DATE_TIME, description: "The code's end of validity (10 minutes after it was issued)." },
      resend_available_at: {
        ...DATE_TIME,
        description: "When the next send is allowed (30 s after the last; later when the hourly limit is reached).",
      },
      sends_remaining: { type: "integer", minimum: 0, maximum: VERIFICATION_SENDS_PER_HOUR, description: "Sends left in the rolling hour." },
      livemode: { type: "boolean" },
      created_at: { ...DATE_TIME, description: "When the current code was issued." },
      updated_at: DATE_TIME,
    },
    { description: "The latest phone verification of a user. The code itself is never answered." },
  ),
  StartPhoneVerificationRequest: closedObject({ channel: { type: "string", enum: [...VERIFICATION_CHANNELS], default: "sms" } }, { required: [] }),
  CheckPhoneVerificationRequest: closedObject({
    code: { type: "string", pattern: VERIFICATION_CODE_PATTERN.source, description: "The 6-digit code (sandbox: 000000)." },
  }),
  KycSession: closedObject(
    {
      id: { type: "string", pattern: KYC_SESSION_ID_PATTERN.source },
      object: { const: "kyc_session" },
      user_id: { type: "string", pattern: USER_ID_PATTERN.source },
      status: { type: "string", enum: [...KYC_SESSION_STATUSES] },
      url: {
        type: "string",
        format: "uri",
        description: "The page where the end user verifies their identity (sandbox: the dashboard's simulated page).",
      },
      return_url: nullable({ type: "string", format: "uri" }),
      expires_at: { ...DATE_TIME, description: "24 hours after creation; a session still `requires_input` then expires." },
      last_error: nullable(
        closedObject({ code: { type: "string" }, reason: nullable({ type: "string" }) }, { description: "Why the session was rejected." }),
      ),
      livemode: { type: "boolean" },
      created_at: DATE_TIME,
      updated_at: DATE_TIME,
    },
    { description: "An identity verification session of a user." },
  ),
  KycSessionList: listOf("KycSession", "The KYC sessions of a user."),
  CreateKycSessionRequest: closedObject(
    {
      return_url: {
        type: "string",
        maxLength: KYC_RETURN_URL_MAX_LENGTH,
        format: "uri",
        description: "Where the verification page sends the end user back: an absolute https URL (http too in sandbox).",
      },
    },
    { required: [] },
  ),
  RejectKycSessionRequest: closedObject({ reason: { type: "string", minLength: 1, maxLength: KYC_REJECTION_REASON_MAX_LENGTH } }, { required: [] }),
};
