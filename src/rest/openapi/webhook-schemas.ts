// Schemas of the webhooks family (docs/contract.md, "Webhook endpoint", "Webhook delivery",
// "Webhook test result", "Webhook recovery" and "Webhooks"): endpoints, deliveries, test results, recoveries
// and the request bodies.
import { SUBSCRIBABLE_EVENT_TYPES } from "../../domain/event-types.ts";
import {
  DEFAULT_EVENT_TYPES,
  DEFAULT_GRACE_PERIOD_HOURS,
  MAX_DESCRIPTION_LENGTH,
  MAX_EVENT_TYPES,
  MAX_GRACE_PERIOD_HOURS,
  MAX_RECOVERY_DAYS,
} from "../../domain/webhook-endpoint-rules.ts";
import { MAX_WEBHOOK_URL_LENGTH } from "../../domain/webhook-url.ts";
import { ATTEMPT_REQUEST_BODY_KEPT_BYTES, ATTEMPT_RESPONSE_BODY_KEPT_BYTES, DELIVERY_ATTEMPTS_KEPT } from "../../domain/limits.ts";
import { EVENT_ID_PATTERN } from "./event-schemas.ts";
import { closedObject, DATE_TIME, listOf, nullable, oneOfPattern, ref, type JsonSchema } from "./json-schema.ts";

/** The attempt errors besides `http_<status>` (docs/contract.md, Attempt errors). */
const ATTEMPT_ERRORS = [
  "timeout",
  "connection_refused",
  "connection_reset",
  "dns_error",
  "tls_error",
  "host_unreachable",
  "ssrf_blocked",
  "connection_error",
  "internal_error",
  "queue_full",
];
const HTTP_STATUS_ERROR = "http_[1-5][0-9]{2}";

const headerMap: JsonSchema = { type: "object", additionalProperties: { type: "string" } };

const url: JsonSchema = {
  type: "string",
  format: "uri",
  maxLength: MAX_WEBHOOK_URL_LENGTH,
  description: "https; a sandbox endpoint may use http to localhost, 127.0.0.1 or [::1]. Unique per project and environment.",
};
const description: JsonSchema = { type: "string", maxLength: MAX_DESCRIPTION_LENGTH };
const eventTypes: JsonSchema = {
  description: `Up to ${MAX_EVENT_TYPES} distinct event types, or exactly ["*"] for every type, including types added later. \`webhook.test\` is not subscribable.`,
  oneOf: [
    { type: "array", items: { const: "*" }, minItems: 1, maxItems: 1, description: 'Exactly `["*"]`.' },
    {
      type: "array",
      items: { type: "string", enum: [...SUBSCRIBABLE_EVENT_TYPES] },
      minItems: 1,
      maxItems: MAX_EVENT_TYPES,
      uniqueItems: true,
    },
  ],
};

const endpointProperties: Record<string, JsonSchema> = {
  id: { type: "string", format: "uuid" },
  object: { const: "webhook_endpoint" },
  url,
  description,
  event_types: eventTypes,
  enabled: { type: "boolean" },
  disabled_reason: nullable({ type: "string", enum: ["manual", "consecutive_failures"], description: "null while enabled." }),
  secret_last4: { type: "string", minLength: 4, maxLength: 4 },
  previous_secret_expires_at: nullable({
    ...DATE_TIME,
    description: "Set while a rotation grace period lasts: until then the previous secret signs too.",
  }),
  livemode: { type: "boolean" },
  created_at: DATE_TIME,
  updated_at: DATE_TIME,
};

const attemptError = (description: string, more: string[] = []): JsonSchema =>
  nullable({ type: "string", pattern: oneOfPattern([...ATTEMPT_ERRORS, ...more], [HTTP_STATUS_ERROR]), description });

export const webhookSchemas: Record<string, JsonSchema> = {
  WebhookEndpoint: closedObject(endpointProperties, {
    description: "A webhook endpoint; the secret itself is never shown again after creation or rotation.",
  }),
  WebhookEndpointWithSecret: closedObject(
    {
      ...endpointProperties,
      secret: {
        type: "string",
        pattern: "^whsec_[A-Za-z0-9]{32}$",
        description: "The signing secret (the whole string is the HMAC key). Shown only in this response.",
      },
    },
    { description: "A webhook endpoint with its signing secret: the answer of creation and of secret rotation." },
  ),
  CreatedWebhookEndpoint: closedObject(
    {
      ...endpointProperties,
      secret: { type: "string", pattern: "^whsec_[A-Za-z0-9]{32}$", description: "The signing secret (the whole string is the HMAC key)." },
    },
    {
      required: Object.keys(endpointProperties),
      description:
        "The answer of creation: the endpoint with its signing secret. A replay of the creation (same Idempotency-Key) shows the " +
        "secret only while it still signs; after a rotation it answers the endpoint as a retrieval does, after a deletion without the secret.",
    },
  ),
  WebhookEndpointList: listOf("WebhookEndpoint", "Webhook endpoints of the key's project and environment."),
  DeletedWebhookEndpoint: closedObject({
    id: { type: "string", format: "uuid" },
    object: { const: "webhook_endpoint" },
    deleted: { const: true },
  }),
  WebhookTest: closedObject({
    object: { const: "webhook_test" },
    endpoint_id: { type: "string", format: "uuid" },
    event_id: { type: "string", pattern: EVENT_ID_PATTERN, description: "The logged `webhook.test` event." },
    status: { type: "string", enum: ["succeeded", "failed"] },
    response_status: nullable({ type: "integer", minimum: 100, maximum: 599, description: "null when the receiver did not answer." }),
    duration_ms: { type: "integer", minimum: 0 },
    error: attemptError("null on success."),
    timings: closedObject(
      {
        dns_ms: nullable({ type: "integer", minimum: 0, description: "Resolving the host name; null for an IP literal." }),
        connect_ms: nullable({ type: "integer", minimum: 0, description: "Opening the TCP connection." }),
        tls_ms: nullable({ type: "integer", minimum: 0, description: "The TLS handshake; null over http." }),
        first_byte_ms: nullable({ type: "integer", minimum: 0, description: "From the connection being ready to the first byte of the answer." }),
      },
      { description: "How long each phase of the attempt took, in milliseconds; null where a phase did not happen or did not complete." },
    ),
    error_detail: nullable({
      type: "string",
      description:
        "For `ssrf_blocked`, the rule that refused, naming the refused address class (for example `a private address (10.0.0.0/8)`); else null.",
    }),
  }),
  WebhookDeliveryAttempt: closedObject({
    attempted_at: DATE_TIME,
    response_status: nullable({ type: "integer", minimum: 100, maximum: 599 }),
    error: attemptError(
      "null on success; `endpoint_disabled` when the endpoint was disabled while the delivery was pending or when the event occurred.",
      ["endpoint_disabled"],
    ),
    duration_ms: { type: "integer", minimum: 0 },
    request: nullable(ref("WebhookAttemptRequest")),
    response: nullable(ref("WebhookAttemptResponse")),
  }),
  WebhookAttemptRequest: closedObject(
    {
      url: { type: "string", format: "uri" },
      headers: { ...headerMap, description: "The headers sent, the signature included (derived from the secret, never the secret itself)." },
      body: { type: "string", description: `The body exactly as signed, up to its first ${ATTEMPT_REQUEST_BODY_KEPT_BYTES / 1024} KiB.` },
      body_truncated: { type: "boolean" },
    },
    { description: "The request of an attempt, as sent; null when none was made." },
  ),
  WebhookAttemptResponse: closedObject(
    {
      headers: { ...headerMap, description: 'Names in lower case; repeated headers joined with ", "; a `set-cookie` value is not kept.' },
      body: { type: "string", description: `The first ${ATTEMPT_RESPONSE_BODY_KEPT_BYTES / 1024} KiB of the body, as UTF-8 text.` },
      body_truncated: { type: "boolean", description: `The body was longer than ${ATTEMPT_RESPONSE_BODY_KEPT_BYTES / 1024} KiB.` },
    },
    { description: "The receiver's answer to an attempt; null when it did not answer." },
  ),
  WebhookDelivery: closedObject({
    id: { type: "string" },
    object: { const: "webhook_delivery" },
    endpoint_id: { type: "string", format: "uuid" },
    event_id: { type: "string", pattern: EVENT_ID_PATTERN },
    event_type: { type: "string" },
    status: { type: "string", enum: ["pending", "succeeded", "failed"] },
    attempt_count: { type: "integer", minimum: 0 },
    next_attempt_at: nullable({ ...DATE_TIME, description: "null once settled." }),
    last_attempt: nullable(ref("WebhookDeliveryAttempt")),
    attempts: {
      type: "array",
      items: ref("WebhookDeliveryAttempt"),
      maxItems: DELIVERY_ATTEMPTS_KEPT,
      description: `The latest attempts, oldest first (at most ${DELIVERY_ATTEMPTS_KEPT}, across replays), each with its request and response.`,
    },
    created_at: DATE_TIME,
    updated_at: DATE_TIME,
  }),
  WebhookDeliveryList: listOf("WebhookDelivery", "Deliveries of an endpoint."),
  CreateWebhookEndpointRequest: closedObject(
    // null is the same as leaving event_types or description out; url is required.
    { url, event_types: { ...nullable(eventTypes), default: [...DEFAULT_EVENT_TYPES] }, description: { ...nullable(description), default: "" } },
    { required: ["url"], description: "null is the same as leaving a field out." },
  ),
  UpdateWebhookEndpointRequest: closedObject(
    { url, description, event_types: eventTypes, enabled: { type: "boolean", description: "true re-enables a disabled endpoint." } },
    { required: [], description: "Send only the fields to change." },
  ),
  WebhookRecovery: closedObject(
    {
      object: { const: "webhook_recovery" },
      endpoint_id: { type: "string", format: "uuid" },
      since: { ...DATE_TIME, description: "Start of the window, included." },
      until: { ...DATE_TIME, description: "End of the window, excluded: as given, or the time of the recovery." },
      deliveries_queued: {
        type: "integer",
        minimum: 0,
        description: "Failed deliveries of the window now pending again, their first attempts paced. Past the pending limit the rest stay failed.",
      },
    },
    { description: "What a recovery queued." },
  ),
  RecoverWebhookDeliveriesRequest: closedObject(
    {
      since: { ...DATE_TIME, description: `Start of the window, included: at most ${MAX_RECOVERY_DAYS} days ago, not in the future.` },
      until: { ...DATE_TIME, description: "End of the window, excluded; later than `since`. Default: now." },
    },
    { required: ["since"] },
  ),
  RotateWebhookEndpointSecretRequest: closedObject(
    {
      grace_period_hours: {
        type: "integer",
        minimum: 0,
        maximum: MAX_GRACE_PERIOD_HOURS,
        default: DEFAULT_GRACE_PERIOD_HOURS,
        description: "How long the previous secret keeps signing; 0 stops it at once.",
      },
    },
    { required: [] },
  ),
};
