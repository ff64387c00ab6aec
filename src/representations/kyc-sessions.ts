// The KYC session object (docs/contract.md, Resources) and its request bodies, and the Kyc object of `kyc.*`
// events: schemas, examples and presenters.
import type { KycSession } from "../../gen/svc/v1/identity_pb.ts";
import { USER_ID_PATTERN } from "../domain/ids.ts";
import { KYC_REJECTION_REASON_MAX_LENGTH, KYC_RETURN_URL_MAX_LENGTH, KYC_SESSION_ID_PATTERN, KYC_SESSION_STATUSES } from "../domain/kyc.ts";
import { CREATED_AT, UPDATED_AT, USER_ID } from "./example-values.ts";
import { closedObject, constant, dateTime, exampleList, listOf, named, nullable, type Static, stringEnum, Type } from "./json-schema.ts";
import { isoTime, orNull, requiredIsoTime } from "./json-values.ts";

export const kycSessionSchema = closedObject(
  {
    id: Type.String({ pattern: KYC_SESSION_ID_PATTERN.source }),
    object: constant("kyc_session"),
    user_id: Type.String({ pattern: USER_ID_PATTERN.source }),
    status: stringEnum(KYC_SESSION_STATUSES),
    url: Type.String({
      format: "uri",
      description: "The page where the end user verifies their identity (sandbox: the dashboard's simulated page).",
    }),
    return_url: nullable(Type.String({ format: "uri" })),
    expires_at: dateTime("24 hours after creation; a session still `requires_input` then expires."),
    last_error: nullable(closedObject({ code: Type.String(), reason: nullable(Type.String()) }, { description: "Why the session was rejected." })),
    livemode: Type.Boolean(),
    created_at: dateTime(),
    updated_at: dateTime(),
  },
  { description: "An identity verification session of a user." },
);
type KycSessionJson = Static<typeof kycSessionSchema>;

const KYC_SESSION_ID = "kyc_7Gm2QpXw9LrT4vNc8KbZ1sYd";
const REQUIRES_INPUT: KycSessionJson = {
  id: KYC_SESSION_ID,
  object: "kyc_session",
  user_id: USER_ID,
  status: "requires_input",
  url: `https://kyc.example.com/sessions/${KYC_SESSION_ID}`,
  return_url: "https://app.example.com/kyc/done",
  expires_at: "2026-11-21T09:14:03.512Z",
  last_error: null,
  livemode: false,
  created_at: CREATED_AT,
  updated_at: CREATED_AT,
};
named("KycSession", kycSessionSchema, [REQUIRES_INPUT]);

/** Sessions in the states the KYC operations end in. */
export const KYC_SESSION_EXAMPLES = {
  canceled: { ...REQUIRES_INPUT, status: "canceled", updated_at: UPDATED_AT },
  processing: { ...REQUIRES_INPUT, status: "processing", updated_at: UPDATED_AT },
  approved: { ...REQUIRES_INPUT, status: "approved", updated_at: UPDATED_AT },
  rejected: {
    ...REQUIRES_INPUT,
    status: "rejected",
    last_error: { code: "verification_rejected", reason: "Document expired" },
    updated_at: UPDATED_AT,
  },
} satisfies Record<string, KycSessionJson>;

export const kycSessionListSchema = listOf(kycSessionSchema, "The KYC sessions of a user.");
named("KycSessionList", kycSessionListSchema, [exampleList(`/v1/users/${USER_ID}/kyc-sessions`, [REQUIRES_INPUT])]);

export const createKycSessionRequestSchema = closedObject({
  return_url: Type.Optional(
    Type.String({
      maxLength: KYC_RETURN_URL_MAX_LENGTH,
      format: "uri",
      description: "Where the verification page sends the end user back: an absolute https URL (http too in sandbox).",
    }),
  ),
});
named("CreateKycSessionRequest", createKycSessionRequestSchema, [{ return_url: "https://app.example.com/kyc/done" }]);

export const rejectKycSessionRequestSchema = closedObject({
  reason: Type.Optional(Type.String({ minLength: 1, maxLength: KYC_REJECTION_REASON_MAX_LENGTH })),
});
named("RejectKycSessionRequest", rejectKycSessionRequestSchema, [{ reason: "Document expired" }]);

/** The Kyc object of `kyc.*` events: `status` is the user's new kyc_status. */
export const kycSchema = closedObject({
  object: constant("kyc"),
  user_id: Type.String(),
  status: Type.String(),
  livemode: Type.Boolean(),
});
export type KycJson = Static<typeof kycSchema>;
named("Kyc", kycSchema, [{ object: "kyc", user_id: USER_ID, status: "approved", livemode: false }]);

export function kycSessionJson(s: KycSession): KycSessionJson {
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

export function kycJson(userId: string, kycStatus: string, livemode: boolean): KycJson {
  return { object: "kyc", user_id: userId, status: kycStatus, livemode };
}
