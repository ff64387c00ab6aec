// The one catalogue of error codes: HTTP status, error family and gRPC status of each, as plain data. Services
// throw `svcError(code, ...)`; every transport renders it from here (RPC through pipeline/connect-errors.ts).
import { MAX_WEBHOOK_ENDPOINTS } from "./limits.ts";

export type ErrorType =
  | "authentication_error"
  | "permission_error"
  | "invalid_request_error"
  | "idempotency_error"
  | "rate_limit_error"
  | "api_error";

/** The gRPC status an error is answered with over RPC, by its canonical name (as the Connect protocol spells it). */
export type RpcStatus =
  | "invalid_argument"
  | "not_found"
  | "already_exists"
  | "failed_precondition"
  | "aborted"
  | "permission_denied"
  | "resource_exhausted"
  | "unauthenticated"
  | "internal"
  | "unavailable";

export interface ErrorDefinition {
  readonly status: number;
  readonly type: ErrorType;
  readonly rpcStatus: RpcStatus;
  /** Default message; a thrower may give a more precise one. */
  readonly message: string;
}

const auth = (message: string): ErrorDefinition => ({
  status: 401,
  type: "authentication_error",
  rpcStatus: "unauthenticated",
  message,
});
const permission = (message: string): ErrorDefinition => ({
  status: 403,
  type: "permission_error",
  rpcStatus: "permission_denied",
  message,
});
const invalid = (status: number, rpcStatus: RpcStatus, message: string): ErrorDefinition => ({
  status,
  type: "invalid_request_error",
  rpcStatus,
  message,
});

export const ERROR_CATALOGUE = {
  idempotency_key_invalid: {
    status: 400,
    type: "idempotency_error",
    rpcStatus: "invalid_argument",
    message: "The Idempotency-Key header must be 1 to 255 visible ASCII characters.",
  },
  invalid_cursor: invalid(400, "invalid_argument", "The starting_after cursor does not name an object of this list."),
  invalid_json: invalid(400, "invalid_argument", "The request body is not a valid JSON object."),
  unsupported_version: invalid(400, "invalid_argument", "The Svc-Version header names a version that does not exist."),
  api_key_revoked: auth("This API key has been revoked."),
  invalid_api_key: auth("The API key is unknown or malformed."),
  missing_api_key: auth("No API key was given: send 'Authorization: Bearer <API_KEY>'."),
  live_feature_unavailable: permission("Phone verification is not enabled for live keys."),
  live_not_enabled: permission("Live access is not enabled for this organization."),
  organization_suspended: permission("This organization is suspended."),
  sandbox_only: permission("This route accepts sandbox keys only."),
  event_not_found: invalid(404, "not_found", "No event with this id."),
  kyc_session_not_found: invalid(404, "not_found", "No KYC session with this id."),
  transaction_not_found: invalid(404, "not_found", "No transaction with this id."),
  request_log_not_found: invalid(404, "not_found", "No request log with this id."),
  route_not_found: invalid(404, "not_found", "No route matches this method and path."),
  user_not_found: invalid(404, "not_found", "No user with this id."),
  webhook_delivery_not_found: invalid(404, "not_found", "No webhook delivery with this id."),
  webhook_endpoint_not_found: invalid(404, "not_found", "No webhook endpoint with this id."),
  // Internal AdminService only; never answered under /v1.
  organization_not_found: invalid(404, "not_found", "No organization with this id."),
  project_not_found: invalid(404, "not_found", "No project with this id."),
  api_key_not_found: invalid(404, "not_found", "No API key with this id."),
  admin_token_invalid: auth("The admin token is missing or wrong."),
  already_verified: invalid(409, "failed_precondition", "The phone number is already verified."),
  delivery_in_progress: invalid(409, "aborted", "The original delivery is still pending or being retried."),
  endpoint_disabled: invalid(409, "failed_precondition", "The webhook endpoint is disabled; re-enable it before replaying."),
  feature_unavailable: invalid(409, "failed_precondition", "Live identity verification sessions are not enabled."),
  idempotency_in_progress: {
    status: 409,
    type: "idempotency_error",
    rpcStatus: "aborted",
    message: "A request with this Idempotency-Key is still running; retry after a short wait.",
  },
  insufficient_funds: invalid(409, "failed_precondition", "The sandbox balance is insufficient."),
  // Aborted, as work to take up again: the client resumes the stream from the log, losing nothing.
  stream_fell_behind: invalid(
    409,
    "aborted",
    "The stream's reader fell too far behind; open it again (an event stream with starting_after set to the last event received, to miss none).",
  ),
  invalid_state: invalid(409, "failed_precondition", "KYC is already approved for this user."),
  kyc_required: invalid(409, "failed_precondition", "KYC must be approved first."),
  no_pending_verification: invalid(409, "failed_precondition", "No verification code is pending; call the verification route first."),
  tagname_already_taken: invalid(409, "already_exists", "This tagname is used by another user of the project."),
  user_already_exists: invalid(409, "already_exists", "A user with this phone or external_id already exists in the project."),
  user_suspended: invalid(409, "failed_precondition", "The user is suspended."),
  wallet_not_ready: invalid(409, "failed_precondition", "The user's wallet is not ready yet (wallet_status is not ready)."),
  webhook_endpoint_exists: invalid(409, "already_exists", "A webhook endpoint with this URL already exists in this environment."),
  webhook_endpoint_limit: invalid(
    409,
    "failed_precondition",
    `The project already has ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints in this environment.`,
  ),
  payload_too_large: invalid(413, "resource_exhausted", "The request body exceeds the maximum accepted size."),
  unsupported_media_type: invalid(415, "invalid_argument", "The request body must be JSON: send Content-Type: application/json."),
  request_header_fields_too_large: invalid(431, "resource_exhausted", "The request headers exceed the maximum accepted size."),
  idempotency_key_reuse: {
    status: 422,
    type: "idempotency_error",
    rpcStatus: "invalid_argument",
    message: "This Idempotency-Key was used with a different method, route or body.",
  },
  invalid_verification_code: invalid(422, "invalid_argument", "The verification code is wrong."),
  invalid_webhook_url: invalid(422, "invalid_argument", "The URL is refused by the webhook URL rules."),
  validation_error: invalid(422, "invalid_argument", "A field is invalid."),
  verification_attempts_exceeded: invalid(422, "invalid_argument", "Too many wrong attempts; request a new code."),
  verification_expired: invalid(422, "invalid_argument", "The code expired; request a new one."),
  rate_limit_exceeded: {
    status: 429,
    type: "rate_limit_error",
    rpcStatus: "resource_exhausted",
    message: "Too many requests; wait Retry-After seconds, then retry.",
  },
  internal_error: {
    status: 500,
    type: "api_error",
    rpcStatus: "internal",
    message: "An internal error occurred; retry with exponential backoff.",
  },
  kyc_session_unavailable: {
    status: 503,
    type: "api_error",
    rpcStatus: "unavailable",
    message: "The identity verification session could not start; retry shortly.",
  },
  verification_unavailable: {
    status: 503,
    type: "api_error",
    rpcStatus: "unavailable",
    message: "Phone verification is temporarily unavailable; a failed check does not use up an attempt.",
  },
} as const satisfies Record<string, ErrorDefinition>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export interface SvcErrorOptions {
  /** The offending parameter (validation errors). Nested parameters are dotted. */
  param?: string;
  /** Further machine-readable details (for example `retry_after`); RPC carries them in ErrorInfo metadata. */
  metadata?: Record<string, string>;
}

/** An error of the catalogue, as services throw it; each transport renders it in its own form. */
export class SvcError extends Error {
  readonly param: string | undefined;
  readonly metadata: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: SvcErrorOptions = {},
  ) {
    super(message);
    this.name = "SvcError";
    this.param = options.param;
    this.metadata = { ...options.metadata };
  }
}

export function svcError(code: ErrorCode, message?: string, options: SvcErrorOptions = {}): SvcError {
  return new SvcError(code, message ?? ERROR_CATALOGUE[code].message, options);
}

/** Shorthand for the most common error: a field that breaks a rule. */
export function validationError(param: string, message: string): SvcError {
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
  if (error instanceof SvcError) {
    return {
      code: error.code,
      definition: ERROR_CATALOGUE[error.code],
      message: error.message,
      ...(error.param !== undefined ? { param: error.param } : {}),
      metadata: { ...error.metadata },
    };
  }
  const definition = ERROR_CATALOGUE.internal_error;
  return { code: "internal_error", definition, message: definition.message, metadata: {} };
}
