// The one catalogue of error codes (docs/contract.md, Errors): HTTP status, error family and Connect code of each.
// Services throw `svcError(code, ...)`; every transport renders it from here.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema, type ErrorInfo } from "../../gen/google/rpc/error_details_pb.ts";
import { MAX_WEBHOOK_ENDPOINTS } from "./limits.ts";

export type ErrorType =
  | "authentication_error"
  | "permission_error"
  | "invalid_request_error"
  | "idempotency_error"
  | "rate_limit_error"
  | "api_error";

export interface ErrorDefinition {
  readonly status: number;
  readonly type: ErrorType;
  readonly connectCode: Code;
  /** Default message; a thrower may give a more precise one. */
  readonly message: string;
}

const auth = (message: string): ErrorDefinition => ({
  status: 401,
  type: "authentication_error",
  connectCode: Code.Unauthenticated,
  message,
});
const permission = (message: string): ErrorDefinition => ({
  status: 403,
  type: "permission_error",
  connectCode: Code.PermissionDenied,
  message,
});
const invalid = (status: number, connectCode: Code, message: string): ErrorDefinition => ({
  status,
  type: "invalid_request_error",
  connectCode,
  message,
});

export const ERROR_CATALOGUE = {
  idempotency_key_invalid: {
    status: 400,
    type: "idempotency_error",
    connectCode: Code.InvalidArgument,
    message: "The Idempotency-Key header must be 1 to 255 visible ASCII characters.",
  },
  invalid_cursor: invalid(400, Code.InvalidArgument, "The starting_after cursor does not name an object of this list."),
  invalid_json: invalid(400, Code.InvalidArgument, "The request body is not a valid JSON object."),
  unsupported_version: invalid(400, Code.InvalidArgument, "The Svc-Version header names a version that does not exist."),
  api_key_revoked: auth("This API key has been revoked."),
  invalid_api_key: auth("The API key is unknown or malformed."),
  missing_api_key: auth("No API key was given: send 'Authorization: Bearer <API_KEY>'."),
  live_feature_unavailable: permission("Phone verification is not enabled for live keys."),
  live_not_enabled: permission("Live access is not enabled for this organization."),
  organization_suspended: permission("This organization is suspended."),
  sandbox_only: permission("This route accepts sandbox keys only."),
  event_not_found: invalid(404, Code.NotFound, "No event with this id."),
  kyc_session_not_found: invalid(404, Code.NotFound, "No KYC session with this id."),
  transaction_not_found: invalid(404, Code.NotFound, "No transaction with this id."),
  request_log_not_found: invalid(404, Code.NotFound, "No request log with this id."),
  route_not_found: invalid(404, Code.NotFound, "No route matches this method and path."),
  user_not_found: invalid(404, Code.NotFound, "No user with this id."),
  webhook_delivery_not_found: invalid(404, Code.NotFound, "No webhook delivery with this id."),
  webhook_endpoint_not_found: invalid(404, Code.NotFound, "No webhook endpoint with this id."),
  // Internal AdminService only; never answered under /v1.
  organization_not_found: invalid(404, Code.NotFound, "No organization with this id."),
  project_not_found: invalid(404, Code.NotFound, "No project with this id."),
  api_key_not_found: invalid(404, Code.NotFound, "No API key with this id."),
  admin_token_invalid: auth("The admin token is missing or wrong."),
  already_verified: invalid(409, Code.FailedPrecondition, "The phone number is already verified."),
  delivery_in_progress: invalid(409, Code.Aborted, "The original delivery is still pending or being retried."),
  endpoint_disabled: invalid(409, Code.FailedPrecondition, "The webhook endpoint is disabled; re-enable it before replaying."),
  feature_unavailable: invalid(409, Code.FailedPrecondition, "Live identity verification sessions are not enabled."),
  idempotency_in_progress: {
    status: 409,
    type: "idempotency_error",
    connectCode: Code.Aborted,
    message: "A request with this Idempotency-Key is still running; retry after a short wait.",
  },
  insufficient_funds: invalid(409, Code.FailedPrecondition, "The sandbox balance is insufficient."),
  invalid_state: invalid(409, Code.FailedPrecondition, "KYC is already approved for this user."),
  kyc_required: invalid(409, Code.FailedPrecondition, "KYC must be approved first."),
  no_pending_verification: invalid(409, Code.FailedPrecondition, "No verification code is pending; call the verification route first."),
  tagname_already_taken: invalid(409, Code.AlreadyExists, "This tagname is used by another user of the project."),
  user_already_exists: invalid(409, Code.AlreadyExists, "A user with this phone or external_id already exists in the project."),
  user_suspended: invalid(409, Code.FailedPrecondition, "The user is suspended."),
  wallet_not_ready: invalid(409, Code.FailedPrecondition, "The user's wallet is not ready yet (wallet_status is not ready)."),
  webhook_endpoint_exists: invalid(409, Code.AlreadyExists, "A webhook endpoint with this URL already exists in this environment."),
  webhook_endpoint_limit: invalid(
    409,
    Code.FailedPrecondition,
    `The project already has ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints in this environment.`,
  ),
  payload_too_large: invalid(413, Code.ResourceExhausted, "The request body exceeds the maximum accepted size."),
  unsupported_media_type: invalid(415, Code.InvalidArgument, "The request body must be JSON: send Content-Type: application/json."),
  request_header_fields_too_large: invalid(431, Code.ResourceExhausted, "The request headers exceed the maximum accepted size."),
  idempotency_key_reuse: {
    status: 422,
    type: "idempotency_error",
    connectCode: Code.InvalidArgument,
    message: "This Idempotency-Key was used with a different method, route or body.",
  },
  invalid_verification_code: invalid(422, Code.InvalidArgument, "The verification code is wrong."),
  invalid_webhook_url: invalid(422, Code.InvalidArgument, "The URL is refused by the webhook URL rules."),
  validation_error: invalid(422, Code.InvalidArgument, "A field is invalid."),
  verification_attempts_exceeded: invalid(422, Code.InvalidArgument, "Too many wrong attempts; request a new code."),
  verification_expired: invalid(422, Code.InvalidArgument, "The code expired; request a new one."),
  rate_limit_exceeded: {
    status: 429,
    type: "rate_limit_error",
    connectCode: Code.ResourceExhausted,
    message: "Too many requests; wait Retry-After seconds, then retry.",
  },
  internal_error: {
    status: 500,
    type: "api_error",
    connectCode: Code.Internal,
    message: "An internal error occurred; retry with exponential backoff.",
  },
  kyc_session_unavailable: {
    status: 503,
    type: "api_error",
    connectCode: Code.Unavailable,
    message: "The identity verification session could not start; retry shortly.",
  },
  verification_unavailable: {
    status: 503,
    type: "api_error",
    connectCode: Code.Unavailable,
    message: "Phone verification is temporarily unavailable; a failed check does not use up an attempt.",
  },
} as const satisfies Record<string, ErrorDefinition>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export const ERROR_DOMAIN = "svc";

export interface SvcErrorOptions {
  /** The offending parameter (validation errors). Nested parameters are dotted. */
  param?: string;
  /** Further machine-readable details, carried in ErrorInfo metadata (for example `retry_after`). */
  metadata?: Record<string, string>;
}

/** A ConnectError carrying the error code in a google.rpc.ErrorInfo detail. */
export function svcError(code: ErrorCode, message?: string, options: SvcErrorOptions = {}): ConnectError {
  const definition: ErrorDefinition = ERROR_CATALOGUE[code];
  const metadata: Record<string, string> = { ...options.metadata };
  if (options.param !== undefined) metadata.param = options.param;
  const info = create(ErrorInfoSchema, { reason: code, domain: ERROR_DOMAIN, metadata });
  return new ConnectError(message ?? definition.message, definition.connectCode, undefined, [{ desc: ErrorInfoSchema, value: info }]);
}

/** Shorthand for the most common error: a field that breaks a rule. */
export function validationError(param: string, message: string): ConnectError {
  return svcError("validation_error", message, { param });
}

export interface DescribedError {
  code: ErrorCode;
  definition: ErrorDefinition;
  message: string;
  param?: string;
  metadata: Record<string, string>;
}

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERROR_CATALOGUE, value);
}

/**
 * What a thrown value means to a client. Anything that is not one of our coded errors becomes
 * `internal_error` with the catalogue's message, so internals never leak.
 */
export function describeError(error: unknown): DescribedError {
  if (error instanceof ConnectError) {
    const info = error.findDetails(ErrorInfoSchema).find((d: ErrorInfo) => d.domain === ERROR_DOMAIN);
    if (info && isErrorCode(info.reason)) {
      const { param, ...metadata } = info.metadata;
      return {
        code: info.reason,
        definition: ERROR_CATALOGUE[info.reason],
        message: error.rawMessage,
        ...(param !== undefined ? { param } : {}),
        metadata,
      };
    }
  }
  const definition = ERROR_CATALOGUE.internal_error;
  return { code: "internal_error", definition, message: definition.message, metadata: {} };
}
