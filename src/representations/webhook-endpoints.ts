// The webhook_endpoint object (docs/contract.md, Webhook endpoint) and its request bodies: schemas, examples and
// presenters. Every field is present (null where unset), except `secret`, which only creation and rotation carry.
import type { WebhookEndpoint } from "../../gen/svc/v1/webhook_endpoints_pb.ts";
import { SUBSCRIBABLE_EVENT_TYPES } from "../domain/event-types.ts";
import {
  DEFAULT_EVENT_TYPES,
  DEFAULT_GRACE_PERIOD_HOURS,
  MAX_DESCRIPTION_LENGTH,
  MAX_EVENT_TYPES,
  MAX_GRACE_PERIOD_HOURS,
} from "../domain/webhook-endpoint-rules.ts";
import { MAX_WEBHOOK_URL_LENGTH } from "../domain/webhook-url.ts";
import { CREATED_AT, ENDPOINT_ID, UPDATED_AT } from "./example-values.ts";
import { closedObject, constant, dateTime, exampleList, listOf, named, nullable, type Static, stringEnum, Type } from "./json-schema.ts";
import { isoTime, orNull, requiredIsoTime } from "./json-values.ts";

const url = Type.String({
  format: "uri",
  maxLength: MAX_WEBHOOK_URL_LENGTH,
  description: "https; a sandbox endpoint may use http to localhost, 127.0.0.1 or [::1]. Unique per project and environment.",
});
const description = Type.String({ maxLength: MAX_DESCRIPTION_LENGTH });
const eventTypes = Type.Unsafe<string[]>({
  description: `Up to ${MAX_EVENT_TYPES} distinct event types, or exactly ["*"] for every type, including types added later. \`webhook.test\` is not subscribable.`,
  oneOf: [
    { type: "array", items: { const: "*" }, minItems: 1, maxItems: 1, description: 'Exactly `["*"]`.' },
    { type: "array", items: stringEnum(SUBSCRIBABLE_EVENT_TYPES), minItems: 1, maxItems: MAX_EVENT_TYPES, uniqueItems: true },
  ],
});
const secret = (description: string) => Type.String({ pattern: "^whsec_[A-Za-z0-9]{32}$", description });

const endpointProperties = {
  id: Type.String({ format: "uuid" }),
  object: constant("webhook_endpoint"),
  url,
  description,
  event_types: eventTypes,
  enabled: Type.Boolean(),
  disabled_reason: nullable(stringEnum(["manual", "consecutive_failures"], { description: "null while enabled." })),
  secret_last4: Type.String({ minLength: 4, maxLength: 4 }),
  previous_secret_expires_at: nullable(dateTime("Set while a rotation grace period lasts: until then the previous secret signs too.")),
  livemode: Type.Boolean(),
  created_at: dateTime(),
  updated_at: dateTime(),
};

export const webhookEndpointSchema = closedObject(endpointProperties, {
  description: "A webhook endpoint; the secret itself is never shown again after creation or rotation.",
});
type WebhookEndpointJson = Static<typeof webhookEndpointSchema>;
const ENDPOINT_EXAMPLE: WebhookEndpointJson = {
  id: ENDPOINT_ID,
  object: "webhook_endpoint",
  url: "https://hooks.example.com/svc",
  description: "Production order service",
  event_types: ["user.created", "kyc.approved", "transaction.completed"],
  enabled: true,
  disabled_reason: null,
  secret_last4: "x7Qa",
  previous_secret_expires_at: null,
  livemode: false,
  created_at: CREATED_AT,
  updated_at: CREATED_AT,
};
named("WebhookEndpoint", webhookEndpointSchema, [ENDPOINT_EXAMPLE]);
/** An endpoint after an update subscribing it to every type. */
export const UPDATED_WEBHOOK_ENDPOINT_EXAMPLE: WebhookEndpointJson = { ...ENDPOINT_EXAMPLE, event_types: ["*"], updated_at: UPDATED_AT };

export const webhookEndpointWithSecretSchema = closedObject(
  { ...endpointProperties, secret: secret("The signing secret (the whole string is the HMAC key). Shown only in this response.") },
  { description: "A webhook endpoint with its signing secret: the answer of creation and of secret rotation." },
);
named("WebhookEndpointWithSecret", webhookEndpointWithSecretSchema, [
  {
    ...ENDPOINT_EXAMPLE,
    secret: "whsec_Z8pK2mQ7vR4xT9nL1cW6bY3dF5gH0jS2",
    secret_last4: "0jS2",
    previous_secret_expires_at: "2026-11-21T10:00:00.000Z",
    updated_at: "2026-11-20T10:00:00.000Z",
  },
]);

export const createdWebhookEndpointSchema = closedObject(
  { ...endpointProperties, secret: Type.Optional(secret("The signing secret (the whole string is the HMAC key).")) },
  {
    description:
      "The answer of creation: the endpoint with its signing secret. A replay of the creation (same Idempotency-Key) shows the " +
      "secret only while it still signs; after a rotation it answers the endpoint as a retrieval does, after a deletion without the secret.",
  },
);
named("CreatedWebhookEndpoint", createdWebhookEndpointSchema, [{ ...ENDPOINT_EXAMPLE, secret: "whsec_3kT9vLm2QxW7pRz4NcB8sYd1Hf6Gx7Qa" }]);

export const webhookEndpointListSchema = listOf(webhookEndpointSchema, "Webhook endpoints of the key's project and environment.");
named("WebhookEndpointList", webhookEndpointListSchema, [exampleList("/v1/webhook-endpoints", [ENDPOINT_EXAMPLE])]);

export const deletedWebhookEndpointSchema = closedObject({
  id: Type.String({ format: "uuid" }),
  object: constant("webhook_endpoint"),
  deleted: constant(true),
});
named("DeletedWebhookEndpoint", deletedWebhookEndpointSchema, [{ id: ENDPOINT_ID, object: "webhook_endpoint", deleted: true }]);

export const createWebhookEndpointRequestSchema = closedObject(
  {
    url,
    // null is the same as leaving event_types or description out; url is required.
    event_types: Type.Optional(Type.Unsafe<string[] | null>({ ...nullable(eventTypes), default: [...DEFAULT_EVENT_TYPES] })),
    description: Type.Optional(Type.Unsafe<string | null>({ ...nullable(description), default: "" })),
  },
  { description: "null is the same as leaving a field out." },
);
named("CreateWebhookEndpointRequest", createWebhookEndpointRequestSchema, [
  { url: ENDPOINT_EXAMPLE.url, event_types: ENDPOINT_EXAMPLE.event_types, description: ENDPOINT_EXAMPLE.description },
]);

export const updateWebhookEndpointRequestSchema = closedObject(
  {
    url: Type.Optional(url),
    description: Type.Optional(description),
    event_types: Type.Optional(eventTypes),
    enabled: Type.Optional(Type.Boolean({ description: "true re-enables a disabled endpoint." })),
  },
  { description: "Send only the fields to change." },
);
named("UpdateWebhookEndpointRequest", updateWebhookEndpointRequestSchema, [{ enabled: true, event_types: ["*"] }]);

export const rotateWebhookEndpointSecretRequestSchema = closedObject({
  grace_period_hours: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_GRACE_PERIOD_HOURS,
      default: DEFAULT_GRACE_PERIOD_HOURS,
      description: "How long the previous secret keeps signing; 0 stops it at once.",
    }),
  ),
});
named("RotateWebhookEndpointSecretRequest", rotateWebhookEndpointSecretRequestSchema, [{ grace_period_hours: 24 }]);

/** The endpoint as retrievals, lists and updates answer it: never its secret. */
export function webhookEndpointJson(endpoint: WebhookEndpoint): WebhookEndpointJson {
  return {
    id: endpoint.id,
    object: "webhook_endpoint",
    url: endpoint.url,
    description: endpoint.description,
    event_types: [...endpoint.eventTypes],
    enabled: endpoint.enabled,
    disabled_reason: orNull(endpoint.disabledReason),
    secret_last4: endpoint.secretLast4,
    previous_secret_expires_at: isoTime(endpoint.previousSecretExpiresAt),
    livemode: endpoint.livemode,
    created_at: requiredIsoTime(endpoint.createdAt),
    updated_at: requiredIsoTime(endpoint.updatedAt),
  };
}

/** The answer of creation and rotation: the endpoint with its secret, where the service shows it. */
export function webhookEndpointWithSecretJson(endpoint: WebhookEndpoint): Static<typeof createdWebhookEndpointSchema> {
  return { ...webhookEndpointJson(endpoint), ...(endpoint.secret !== undefined ? { secret: endpoint.secret } : {}) };
}

export function deletedWebhookEndpointJson(id: string): Static<typeof deletedWebhookEndpointSchema> {
  return { id, object: "webhook_endpoint", deleted: true };
}
