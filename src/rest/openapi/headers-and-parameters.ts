// The headers of every response, the request headers, and the path and query parameters of the routes.
// Path parameters take their schema from the collection they follow (`/users/{id}` is a user id), query
// parameters from the request message's field names, so both follow the route table.
import { API_VERSIONS } from "../../domain/api-version.ts";
import { EVENT_TYPES } from "../../domain/event-types.ts";
import type { ErrorCode } from "../../domain/errors.ts";
import { USER_ID_PATTERN } from "../../domain/ids.ts";
import { KYC_SESSION_ID_PATTERN } from "../../domain/kyc.ts";
import { IDEMPOTENCY_KEY_PATTERN } from "../../access/idempotency-guard.ts";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../../domain/limits.ts";
import { API_VERSION_HEADER, RATE_LIMIT_LIMIT_HEADER, REPLAYED_HEADER, REQUEST_ID_HEADER } from "../../pipeline/response-headers.ts";
import { EVENT_ID_PATTERN } from "../../representations/events.ts";
import type { JsonSchema } from "../../representations/json-schema.ts";
import { KYC_STATUSES } from "../../representations/users.ts";
import { REQUEST_LOG_PATH_IDENTIFIER, REQUEST_LOG_QUERY_PARAMETERS, requestLogParameterComponents } from "./request-log-parameters.ts";
import { ROUTE_QUERY_PARAMETERS, TRANSACTION_PATH_IDENTIFIER, transactionParameterComponents } from "./transaction-parameters.ts";

const componentRef = (kind: "headers" | "parameters", name: string): JsonSchema => ({ $ref: `#/components/${kind}/${name}` });

/** A time in a query string: unix seconds or an RFC 3339 date-time with an offset (request-decoder.ts). */
const QUERY_TIME: JsonSchema = {
  type: "string",
  pattern: "^([0-9]{1,11}|[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2}))$",
};

export const responseHeaders: Record<string, JsonSchema> = {
  [REQUEST_ID_HEADER]: {
    description: "Identifies the request; equals `error.request_id` of an error. A replay carries the original request's id.",
    required: true,
    schema: { type: "string", pattern: "^req_[A-Za-z0-9]+$" },
  },
  [API_VERSION_HEADER]: { description: "The API version that answered.", required: true, schema: { type: "string", enum: [...API_VERSIONS] } },
  [RATE_LIMIT_LIMIT_HEADER]: {
    description: "Requests allowed in the current 60 s window (per API key; per client address without a valid key).",
    required: true,
    schema: { type: "integer", minimum: 1 },
  },
  "X-RateLimit-Remaining": { description: "Requests left in the window.", required: true, schema: { type: "integer", minimum: 0 } },
  "X-RateLimit-Reset": { description: "Seconds before the quota renews.", required: true, schema: { type: "integer", minimum: 0 } },
  "Retry-After": { description: "Whole seconds to wait before retrying.", required: true, schema: { type: "integer", minimum: 1 } },
  [REPLAYED_HEADER]: {
    description: "`true` when this is the stored response of an earlier request with the same Idempotency-Key.",
    required: false,
    schema: { type: "string", const: "true" },
  },
};

const headerComponentName = (header: string): string => header.replace(/-/g, "");

export const headerComponents: Record<string, JsonSchema> = {
  ...Object.fromEntries(Object.entries(responseHeaders).map(([header, definition]) => [headerComponentName(header), definition])),
  // Sent by GET /v1/openapi.json only: no API route allows other origins.
  AccessControlAllowOrigin: { description: "`*`: any origin may read the document.", required: true, schema: { type: "string", const: "*" } },
};

const EVERY_RESPONSE_HEADERS = [REQUEST_ID_HEADER, API_VERSION_HEADER, RATE_LIMIT_LIMIT_HEADER, "X-RateLimit-Remaining", "X-RateLimit-Reset"];

/** The headers of one response: the five of every response, Retry-After on 429, the replay marker where stored responses can be replayed. */
export function headersOf(status: number, replayable: boolean): Record<string, JsonSchema> {
  const names = [...EVERY_RESPONSE_HEADERS];
  // 503 verification_unavailable and kyc_session_unavailable say when to retry too.
  if (status === 429 || status === 503) names.push("Retry-After");
  if (replayable) names.push(REPLAYED_HEADER);
  return Object.fromEntries(names.map((name) => [name, componentRef("headers", headerComponentName(name))]));
}

export const parameterComponents: Record<string, JsonSchema> = {
  ...transactionParameterComponents,
  ...requestLogParameterComponents,
  IdempotencyKey: {
    name: "Idempotency-Key",
    in: "header",
    required: false,
    description:
      "Makes the call safe to retry: the first completed response (any but 5xx, 429, 401 and 403) is replayed for 24 hours. " +
      "Scoped to the project and environment; reusing it with another method, route or body is 422 idempotency_key_reuse. A UUID v4 is recommended.",
    schema: {
      type: "string",
      minLength: 1,
      maxLength: 255,
      pattern: IDEMPOTENCY_KEY_PATTERN.source,
      description: "1 to 255 visible ASCII characters.",
    },
  },
  SvcVersion: {
    name: "Svc-Version",
    in: "header",
    required: false,
    description: "The API version to use; omitted: the latest. A version that does not exist is 400 unsupported_version.",
    schema: { type: "string", enum: [...API_VERSIONS] },
  },
  Limit: {
    name: "limit",
    in: "query",
    required: false,
    description: "How many objects to answer.",
    schema: { type: "integer", minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
  },
  StartingAfter: {
    name: "starting_after",
    in: "query",
    required: false,
    description:
      "The id of the last object of the previous page: the page holds the objects older than it. An id not in this list is 400 invalid_cursor.",
    schema: { type: "string" },
  },
  EndingBefore: {
    name: "ending_before",
    in: "query",
    required: false,
    description:
      "The id of the first object of the page after this one: the page holds the objects just newer than it, still newest first, and `has_more` " +
      "says whether newer ones precede it. Not with `starting_after` (422 validation_error); an id not in this list is 400 invalid_cursor.",
    schema: { type: "string" },
  },
  Created: {
    name: "created",
    in: "query",
    required: false,
    style: "deepObject",
    explode: true,
    description:
      "Bounds on the creation time, sent as `created[gt]`, `created[gte]`, `created[lt]` and `created[lte]`, each unix seconds or an RFC 3339 " +
      "date-time with an offset; all given apply.",
    schema: {
      type: "object",
      additionalProperties: false,
      properties: Object.fromEntries(["gt", "gte", "lt", "lte"].map((bound) => [bound, QUERY_TIME])),
    },
    example: { gte: "2026-11-01T00:00:00Z", lt: "1795000000" },
  },
  EventTypeFilter: {
    name: "type",
    in: "query",
    required: false,
    description: "Only events of this type.",
    schema: { type: "string", enum: [...EVENT_TYPES] },
  },
  ExternalIdFilter: {
    name: "external_id",
    in: "query",
    required: false,
    description: "Only the user with this external_id.",
    schema: { type: "string" },
  },
  PhoneFilter: {
    name: "phone",
    in: "query",
    required: false,
    description: "Only the user with this phone number (E.164, `+` sent as `%2B`).",
    schema: { type: "string" },
  },
  TagnameFilter: {
    name: "tagname",
    in: "query",
    required: false,
    description: "Only the user with this tagname, ignoring case.",
    schema: { type: "string" },
  },
  KycStatusFilter: {
    name: "kyc_status",
    in: "query",
    required: false,
    description: "Only users with this kyc_status.",
    schema: { type: "string", enum: KYC_STATUSES },
  },
  VerifiedFilter: {
    name: "verified",
    in: "query",
    required: false,
    description: "Only users whose phone is verified (`true`) or not (`false`).",
    schema: { type: "boolean" },
  },
  SuspendedFilter: {
    name: "suspended",
    in: "query",
    required: false,
    description: "Only suspended (`true`) or unsuspended (`false`) users.",
    schema: { type: "boolean" },
  },
  DeliveryStatusFilter: {
    name: "status",
    in: "query",
    required: false,
    description: "Only deliveries in this status.",
    schema: { type: "string", enum: ["pending", "succeeded", "failed"] },
  },
};

export const IDEMPOTENCY_KEY_PARAMETER = componentRef("parameters", "IdempotencyKey");
export const VERSION_PARAMETER = componentRef("parameters", "SvcVersion");

/** Query parameter component of each list request field, by proto field name. */
const QUERY_PARAMETER_BY_FIELD: Record<string, string> = {
  limit: "Limit",
  starting_after: "StartingAfter",
  ending_before: "EndingBefore",
  created: "Created",
  type: "EventTypeFilter",
  status: "DeliveryStatusFilter",
  external_id: "ExternalIdFilter",
  phone: "PhoneFilter",
  tagname: "TagnameFilter",
  kyc_status: "KycStatusFilter",
  verified: "VerifiedFilter",
  suspended: "SuspendedFilter",
};

export function queryParameter(fieldName: string, route: string): JsonSchema {
  const component =
    ROUTE_QUERY_PARAMETERS[route]?.[fieldName] ?? REQUEST_LOG_QUERY_PARAMETERS[route]?.[fieldName] ?? QUERY_PARAMETER_BY_FIELD[fieldName];
  if (!component) throw new Error(`${route}: no query parameter is documented for the request field "${fieldName}"`);
  return componentRef("parameters", component);
}

interface PathIdentifier {
  schema: JsonSchema;
  /** Answered when the id names nothing of the key's project and environment. */
  notFound: ErrorCode;
}

/** By the collection segment a path parameter follows. */
const PATH_IDENTIFIERS: Record<string, PathIdentifier> = {
  users: {
    schema: { type: "string", pattern: USER_ID_PATTERN.source, description: "A user id; any other value is 404 user_not_found." },
    notFound: "user_not_found",
  },
  transactions: TRANSACTION_PATH_IDENTIFIER,
  events: { schema: { type: "string", pattern: EVENT_ID_PATTERN }, notFound: "event_not_found" },
  "webhook-endpoints": { schema: { type: "string", format: "uuid" }, notFound: "webhook_endpoint_not_found" },
  deliveries: { schema: { type: "string" }, notFound: "webhook_delivery_not_found" },
  "request-logs": REQUEST_LOG_PATH_IDENTIFIER,
  "kyc-sessions": { schema: { type: "string", pattern: KYC_SESSION_ID_PATTERN.source }, notFound: "kyc_session_not_found" },
};

export function pathIdentifierOf(pathTemplate: string, param: string): PathIdentifier {
  const segments = pathTemplate.split("/");
  const collection = segments[segments.indexOf(`{${param}}`) - 1] ?? "";
  const identifier = PATH_IDENTIFIERS[collection];
  if (!identifier) throw new Error(`${pathTemplate}: no identifier is documented for {${param}} after "${collection}"`);
  return identifier;
}
