// The REST surface of phone verification, KYC sessions and the sandbox drivers of KYC sessions.
import { KycSessionsService, PhoneVerificationService, SandboxService } from "../../gen/svc/v1/identity_pb.ts";
import { jsonList } from "../representations/json-values.ts";
import {
  createKycSessionRequestSchema,
  KYC_SESSION_EXAMPLES,
  kycSessionJson,
  kycSessionListSchema,
  kycSessionSchema,
  rejectKycSessionRequestSchema,
} from "../representations/kyc-sessions.ts";
import {
  APPROVED_PHONE_VERIFICATION_EXAMPLE,
  checkPhoneVerificationRequestSchema,
  phoneVerificationJson,
  phoneVerificationSchema,
  startPhoneVerificationRequestSchema,
} from "../representations/phone-verifications.ts";
import { describeService } from "./method-description.ts";

const VERIFICATION = "Phone verification";
const KYC = "KYC sessions";
const SANDBOX = "Sandbox";

export const phoneVerificationApi = describeService(PhoneVerificationService, {
  startPhoneVerification: {
    status: 200,
    present: (r) => phoneVerificationJson(r.phoneVerification!),
    liveSetting: "live_phone_verification_enabled",
    operation: {
      summary: "Start or resend a phone verification",
      description:
        "Sends a 6-digit code by SMS, valid 10 minutes. While the code is pending, a start re-sends the same code and keeps `attempts_remaining`; " +
        "after `expired` or `max_attempts_reached` it issues a new code with 5 attempts. At most one send per 30 seconds and 5 per rolling hour (429 with the exact Retry-After). " +
        "Sandbox: no SMS, the code is always `000000`, and a phone ending in `0503` answers 503 verification_unavailable.",
      tag: VERIFICATION,
      success: { schema: phoneVerificationSchema, description: "The verification, `pending`." },
      requestBody: { schema: startPhoneVerificationRequestSchema, required: false },
      errors: ["already_verified", "verification_unavailable"],
    },
  },
  checkPhoneVerification: {
    status: 200,
    present: (r) => phoneVerificationJson(r.phoneVerification!),
    liveSetting: "live_phone_verification_enabled",
    operation: {
      summary: "Check a verification code",
      description: "The right code approves the verification and sets the user's `verified`; a wrong one uses one of the code's 5 attempts.",
      tag: VERIFICATION,
      success: { schema: phoneVerificationSchema, description: "The verification, `approved`.", example: APPROVED_PHONE_VERIFICATION_EXAMPLE },
      requestBody: { schema: checkPhoneVerificationRequestSchema, required: true },
      errors: ["already_verified", "no_pending_verification", "verification_expired", "verification_attempts_exceeded", "invalid_verification_code"],
    },
  },
  getPhoneVerification: {
    status: 200,
    present: (r) => phoneVerificationJson(r.phoneVerification!),
    liveSetting: "live_phone_verification_enabled",
    operation: {
      summary: "Retrieve the latest phone verification",
      description: "The user's latest verification with its attempts and sends remaining and when the next send is allowed; never the code.",
      tag: VERIFICATION,
      success: { schema: phoneVerificationSchema, description: "The latest verification, whatever its status." },
      errors: ["no_pending_verification"],
    },
  },
});

export const kycSessionsApi = describeService(KycSessionsService, {
  createKycSession: {
    status: 201,
    present: (r) => kycSessionJson(r.kycSession!),
    operation: {
      summary: "Create a KYC session",
      description:
        "The user's `kyc_status` becomes `pending`; a session of the user still `requires_input` is canceled. The session expires after 24 hours if not submitted.",
      tag: KYC,
      success: { schema: kycSessionSchema, description: "The session, `requires_input`, with the `url` of its verification page." },
      requestBody: { schema: createKycSessionRequestSchema, required: false },
      errors: ["feature_unavailable", "user_suspended", "invalid_state", "kyc_session_unavailable"],
    },
  },
  getKycSession: {
    status: 200,
    present: (r) => kycSessionJson(r.kycSession!),
    operation: {
      summary: "Retrieve a KYC session",
      description: "The session with its status, its verification page's `url` and, once rejected, `last_error`.",
      tag: KYC,
      success: { schema: kycSessionSchema, description: "The session." },
    },
  },
  listUserKycSessions: {
    status: 200,
    present: (r, path) => jsonList(path, r.data.map(kycSessionJson), r.hasMore),
    operation: {
      summary: "List a user's KYC sessions",
      description: "Newest first, whatever their status.",
      tag: KYC,
      success: { schema: kycSessionListSchema, description: "Sessions, newest first." },
    },
  },
  cancelKycSession: {
    status: 200,
    present: (r) => kycSessionJson(r.kycSession!),
    operation: {
      summary: "Cancel a KYC session",
      description: "Only from `requires_input`; the user's `kyc_status` goes back to what it was before the session.",
      tag: KYC,
      success: { schema: kycSessionSchema, description: "The session, `canceled`.", example: KYC_SESSION_EXAMPLES.canceled },
      errors: ["invalid_state"],
    },
  },
});

export const sandboxApi = describeService(SandboxService, {
  submitKycSession: {
    status: 200,
    present: (r) => kycSessionJson(r.kycSession!),
    sandboxOnly: true,
    operation: {
      summary: "Sandbox: submit a KYC session",
      description: "As if the end user completed the verification page: `requires_input` -> `processing`.",
      tag: SANDBOX,
      success: { schema: kycSessionSchema, description: "The session, `processing`.", example: KYC_SESSION_EXAMPLES.processing },
      errors: ["invalid_state"],
    },
  },
  approveKycSession: {
    status: 200,
    present: (r) => kycSessionJson(r.kycSession!),
    sandboxOnly: true,
    operation: {
      summary: "Sandbox: approve a KYC session",
      description: "From `requires_input` or `processing`: the user's `kyc_status` becomes `approved` and `kyc.approved` is emitted.",
      tag: SANDBOX,
      success: { schema: kycSessionSchema, description: "The session, `approved`.", example: KYC_SESSION_EXAMPLES.approved },
      errors: ["invalid_state"],
    },
  },
  rejectKycSession: {
    status: 200,
    present: (r) => kycSessionJson(r.kycSession!),
    sandboxOnly: true,
    operation: {
      summary: "Sandbox: reject a KYC session",
      description:
        "From `requires_input` or `processing`: the user's `kyc_status` becomes `rejected` and `kyc.rejected` is emitted; `reason` goes to `last_error`.",
      tag: SANDBOX,
      success: { schema: kycSessionSchema, description: "The session, `rejected`.", example: KYC_SESSION_EXAMPLES.rejected },
      requestBody: { schema: rejectKycSessionRequestSchema, required: false },
      errors: ["invalid_state"],
    },
  },
});
