// The webhook_delivery, webhook_test and webhook_recovery objects (docs/contract.md, Webhook delivery, Webhook
// test result, Webhook recovery) and the recovery's request body: schemas, examples and presenters.
import type { WebhookDelivery, WebhookDeliveryAttempt, WebhookRecovery, WebhookTest } from "../../gen/svc/v1/webhook_endpoints_pb.ts";
import { ATTEMPT_REQUEST_BODY_KEPT_BYTES, ATTEMPT_RESPONSE_BODY_KEPT_BYTES, DELIVERY_ATTEMPTS_KEPT } from "../domain/limits.ts";
import { MAX_RECOVERY_DAYS } from "../domain/webhook-endpoint-rules.ts";
import { EVENT_ID_PATTERN } from "./events.ts";
import { CREATED_AT, ENDPOINT_ID, EVENT_ID, UPDATED_AT } from "./example-values.ts";
import {
  closedObject,
  constant,
  dateTime,
  exampleList,
  listOf,
  named,
  nullable,
  oneOfPattern,
  type Static,
  stringEnum,
  Type,
} from "./json-schema.ts";
import { isoTime, orNull, requiredIsoTime } from "./json-values.ts";

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

const attemptError = (description: string, more: string[] = []) =>
  nullable(Type.String({ pattern: oneOfPattern([...ATTEMPT_ERRORS, ...more], [HTTP_STATUS_ERROR]), description }));
const headerMap = (description: string) =>
  Type.Unsafe<Record<string, string>>({ type: "object", additionalProperties: { type: "string" }, description });
const milliseconds = (description?: string) => nullable(Type.Integer({ minimum: 0, ...(description ? { description } : {}) }));

export const webhookTestSchema = closedObject({
  object: constant("webhook_test"),
  endpoint_id: Type.String({ format: "uuid" }),
  event_id: Type.String({ pattern: EVENT_ID_PATTERN, description: "The logged `webhook.test` event." }),
  status: stringEnum(["succeeded", "failed"]),
  response_status: nullable(Type.Integer({ minimum: 100, maximum: 599, description: "null when the receiver did not answer." })),
  duration_ms: Type.Integer({ minimum: 0 }),
  error: attemptError("null on success."),
  timings: closedObject(
    {
      dns_ms: milliseconds("Resolving the host name; null for an IP literal."),
      connect_ms: milliseconds("Opening the TCP connection."),
      tls_ms: milliseconds("The TLS handshake; null over http."),
      first_byte_ms: milliseconds("From the connection being ready to the first byte of the answer."),
    },
    { description: "How long each phase of the attempt took, in milliseconds; null where a phase did not happen or did not complete." },
  ),
  error_detail: nullable(
    Type.String({
      description:
        "For `ssrf_blocked`, the rule that refused, naming the refused address class (for example `a private address (10.0.0.0/8)`); else null.",
    }),
  ),
});
named("WebhookTest", webhookTestSchema, [
  {
    object: "webhook_test",
    endpoint_id: ENDPOINT_ID,
    event_id: "evt_2c7a9e14-3b6d-4f08-a1d5-7e9c0b4f2a63",
    status: "succeeded",
    response_status: 200,
    duration_ms: 187,
    error: null,
    timings: { dns_ms: 4, connect_ms: 21, tls_ms: 48, first_byte_ms: 112 },
    error_detail: null,
  },
]);

export const webhookAttemptRequestSchema = closedObject(
  {
    url: Type.String({ format: "uri" }),
    headers: headerMap("The headers sent, the signature included (derived from the secret, never the secret itself)."),
    body: Type.String({ description: `The body exactly as signed, up to its first ${ATTEMPT_REQUEST_BODY_KEPT_BYTES / 1024} KiB.` }),
    body_truncated: Type.Boolean(),
  },
  { description: "The request of an attempt, as sent; null when none was made." },
);

export const webhookAttemptResponseSchema = closedObject(
  {
    headers: headerMap('Names in lower case; repeated headers joined with ", "; a `set-cookie` value is not kept.'),
    body: Type.String({ description: `The first ${ATTEMPT_RESPONSE_BODY_KEPT_BYTES / 1024} KiB of the body, as UTF-8 text.` }),
    body_truncated: Type.Boolean({ description: `The body was longer than ${ATTEMPT_RESPONSE_BODY_KEPT_BYTES / 1024} KiB.` }),
  },
  { description: "The receiver's answer to an attempt; null when it did not answer." },
);

export const webhookDeliveryAttemptSchema = closedObject({
  attempted_at: dateTime(),
  response_status: nullable(Type.Integer({ minimum: 100, maximum: 599 })),
  error: attemptError(
    "null on success; `endpoint_disabled` when the endpoint was disabled while the delivery was pending or when the event occurred.",
    ["endpoint_disabled"],
  ),
  duration_ms: Type.Integer({ minimum: 0 }),
  request: nullable(webhookAttemptRequestSchema),
  response: nullable(webhookAttemptResponseSchema),
});
type WebhookDeliveryAttemptJson = Static<typeof webhookDeliveryAttemptSchema>;

const ATTEMPT_EXAMPLE: WebhookDeliveryAttemptJson = {
  attempted_at: "2026-11-20T09:14:04.020Z",
  response_status: 200,
  error: null,
  duration_ms: 143,
  request: {
    url: "https://example.com/webhooks",
    headers: {
      "Svc-Signature": "t=1795684444,v1=5f2b8c0d6a1e4f3b9c7d2e8a1b0c4d6e8f1a3b5c7d9e0f2a4b6c8d0e1f3a5b7c",
      "Svc-Event-Id": EVENT_ID,
      "Svc-Event-Type": "user.created",
      "Svc-Delivery-Attempt": "1",
      "User-Agent": "Svc-Webhooks/1.0",
      Host: "example.com",
      "Content-Type": "application/json",
      "Content-Length": "312",
    },
    body: JSON.stringify({ id: EVENT_ID, object: "event", type: "user.created" }),
    body_truncated: false,
  },
  response: { headers: { "content-type": "text/plain", "content-length": "2" }, body: "ok", body_truncated: false },
};
named("WebhookDeliveryAttempt", webhookDeliveryAttemptSchema, [ATTEMPT_EXAMPLE]);
named("WebhookAttemptRequest", webhookAttemptRequestSchema, [ATTEMPT_EXAMPLE.request!]);
named("WebhookAttemptResponse", webhookAttemptResponseSchema, [ATTEMPT_EXAMPLE.response!]);

export const webhookDeliverySchema = closedObject({
  id: Type.String(),
  object: constant("webhook_delivery"),
  endpoint_id: Type.String({ format: "uuid" }),
  event_id: Type.String({ pattern: EVENT_ID_PATTERN }),
  event_type: Type.String(),
  status: stringEnum(["pending", "succeeded", "failed"]),
  attempt_count: Type.Integer({ minimum: 0 }),
  next_attempt_at: nullable(dateTime("null once settled.")),
  last_attempt: nullable(webhookDeliveryAttemptSchema),
  attempts: Type.Array(webhookDeliveryAttemptSchema, {
    maxItems: DELIVERY_ATTEMPTS_KEPT,
    description: `The latest attempts, oldest first (at most ${DELIVERY_ATTEMPTS_KEPT}, across replays), each with its request and response.`,
  }),
  created_at: dateTime(),
  updated_at: dateTime(),
});
type WebhookDeliveryJson = Static<typeof webhookDeliverySchema>;

const DELIVERY_EXAMPLE: WebhookDeliveryJson = {
  id: "whd_6TnR2wXc9LmQ4bVz7KpS1dJf",
  object: "webhook_delivery",
  endpoint_id: ENDPOINT_ID,
  event_id: EVENT_ID,
  event_type: "user.created",
  status: "succeeded",
  attempt_count: 1,
  next_attempt_at: null,
  last_attempt: ATTEMPT_EXAMPLE,
  attempts: [ATTEMPT_EXAMPLE],
  created_at: CREATED_AT,
  updated_at: "2026-11-20T09:14:04.163Z",
};
named("WebhookDelivery", webhookDeliverySchema, [DELIVERY_EXAMPLE]);

/** Deliveries in the states the delivery operations end in. */
export const WEBHOOK_DELIVERY_EXAMPLES = {
  replayed: { ...DELIVERY_EXAMPLE, status: "pending", attempt_count: 0, next_attempt_at: UPDATED_AT, updated_at: UPDATED_AT },
  retried: { ...DELIVERY_EXAMPLE, status: "pending", next_attempt_at: UPDATED_AT },
} satisfies Record<string, WebhookDeliveryJson>;

export const webhookDeliveryListSchema = listOf(webhookDeliverySchema, "Deliveries of an endpoint.");
named("WebhookDeliveryList", webhookDeliveryListSchema, [exampleList(`/v1/webhook-endpoints/${ENDPOINT_ID}/deliveries`, [DELIVERY_EXAMPLE])]);

export const webhookRecoverySchema = closedObject(
  {
    object: constant("webhook_recovery"),
    endpoint_id: Type.String({ format: "uuid" }),
    since: dateTime("Start of the window, included."),
    until: dateTime("End of the window, excluded: as given, or the time of the recovery."),
    deliveries_queued: Type.Integer({
      minimum: 0,
      description: "Failed deliveries of the window now pending again, their first attempts paced. Past the pending limit the rest stay failed.",
    }),
  },
  { description: "What a recovery queued." },
);
named("WebhookRecovery", webhookRecoverySchema, [
  {
    object: "webhook_recovery",
    endpoint_id: ENDPOINT_ID,
    since: "2026-11-20T00:00:00.000Z",
    until: "2026-11-22T08:40:00.000Z",
    deliveries_queued: 100,
  },
]);

export const recoverWebhookDeliveriesRequestSchema = closedObject({
  since: dateTime(`Start of the window, included: at most ${MAX_RECOVERY_DAYS} days ago, not in the future.`),
  until: Type.Optional(dateTime("End of the window, excluded; later than `since`. Default: now.")),
});
named("RecoverWebhookDeliveriesRequest", recoverWebhookDeliveriesRequestSchema, [{ since: "2026-11-20T00:00:00.000Z" }]);

export function webhookDeliveryJson(delivery: WebhookDelivery): WebhookDeliveryJson {
  return {
    id: delivery.id,
    object: "webhook_delivery",
    endpoint_id: delivery.endpointId,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    status: delivery.status,
    attempt_count: delivery.attemptCount,
    next_attempt_at: isoTime(delivery.nextAttemptAt),
    last_attempt: delivery.lastAttempt ? deliveryAttemptJson(delivery.lastAttempt) : null,
    attempts: delivery.attempts.map(deliveryAttemptJson),
    created_at: requiredIsoTime(delivery.createdAt),
    updated_at: requiredIsoTime(delivery.updatedAt),
  };
}

function deliveryAttemptJson(attempt: WebhookDeliveryAttempt): WebhookDeliveryAttemptJson {
  const { request, response } = attempt;
  return {
    attempted_at: requiredIsoTime(attempt.attemptedAt),
    response_status: orNull(attempt.responseStatus),
    error: orNull(attempt.error),
    duration_ms: attempt.durationMs,
    request: request ? { url: request.url, headers: { ...request.headers }, body: request.body, body_truncated: request.bodyTruncated } : null,
    response: response ? { headers: { ...response.headers }, body: response.body, body_truncated: response.bodyTruncated } : null,
  };
}

export function webhookTestJson(test: WebhookTest): Static<typeof webhookTestSchema> {
  return {
    object: "webhook_test",
    endpoint_id: test.endpointId,
    event_id: test.eventId,
    status: test.status,
    response_status: orNull(test.responseStatus),
    duration_ms: test.durationMs,
    error: orNull(test.error),
    timings: {
      dns_ms: orNull(test.timings?.dnsMs),
      connect_ms: orNull(test.timings?.connectMs),
      tls_ms: orNull(test.timings?.tlsMs),
      first_byte_ms: orNull(test.timings?.firstByteMs),
    },
    error_detail: orNull(test.errorDetail),
  };
}

export function webhookRecoveryJson(recovery: WebhookRecovery): Static<typeof webhookRecoverySchema> {
  return {
    object: "webhook_recovery",
    endpoint_id: recovery.endpointId,
    since: requiredIsoTime(recovery.since),
    until: requiredIsoTime(recovery.until),
    deliveries_queued: recovery.deliveriesQueued,
  };
}
