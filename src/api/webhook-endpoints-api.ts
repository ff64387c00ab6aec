// The REST surface of svc.v1.WebhookEndpointsService.
import { WebhookEndpointsService } from "../../gen/svc/v1/webhook_endpoints_pb.ts";
import { MAX_WEBHOOK_ENDPOINTS } from "../domain/limits.ts";
import { jsonList } from "../representations/json-values.ts";
import { MAX_RECOVERY_DAYS } from "../domain/webhook-endpoint-rules.ts";
import {
  recoverWebhookDeliveriesRequestSchema,
  WEBHOOK_DELIVERY_EXAMPLES,
  webhookDeliveryJson,
  webhookDeliveryListSchema,
  webhookDeliverySchema,
  webhookRecoveryJson,
  webhookRecoverySchema,
  webhookTestJson,
  webhookTestSchema,
} from "../representations/webhook-deliveries.ts";
import {
  createdWebhookEndpointSchema,
  createWebhookEndpointRequestSchema,
  deletedWebhookEndpointJson,
  deletedWebhookEndpointSchema,
  rotateWebhookEndpointSecretRequestSchema,
  UPDATED_WEBHOOK_ENDPOINT_EXAMPLE,
  updateWebhookEndpointRequestSchema,
  webhookEndpointJson,
  webhookEndpointListSchema,
  webhookEndpointSchema,
  webhookEndpointWithSecretJson,
  webhookEndpointWithSecretSchema,
} from "../representations/webhook-endpoints.ts";
import { describeService } from "./method-description.ts";

const ENDPOINTS = "Webhook endpoints";
const DELIVERIES = "Webhook deliveries";

export const webhookEndpointsApi = describeService(WebhookEndpointsService, {
  createWebhookEndpoint: {
    status: 201,
    present: (r) => webhookEndpointWithSecretJson(r.webhookEndpoint!),
    operation: {
      summary: "Create a webhook endpoint",
      description: `At most ${MAX_WEBHOOK_ENDPOINTS} endpoints per project and environment; the URL is unique among them.`,
      tag: ENDPOINTS,
      success: { schema: createdWebhookEndpointSchema, description: "The endpoint with its signing secret, shown this once." },
      requestBody: { schema: createWebhookEndpointRequestSchema, required: true },
      errors: ["invalid_webhook_url", "webhook_endpoint_exists", "webhook_endpoint_limit"],
    },
    // The body's `event_types` fills the list with presence, so `[]` reaches the method as a list sent empty
    // (refused there, as over gRPC) and a missing member as no list (the default); the deprecated repeated
    // field of that name is not read from REST bodies.
    renamedMembers: { event_types: "event_type_list" },
  },
  listWebhookEndpoints: {
    status: 200,
    present: (r, path) => jsonList(path, r.data.map(webhookEndpointJson), r.hasMore),
    operation: {
      summary: "List webhook endpoints",
      description: "Every endpoint of the key's project and environment, newest first, disabled ones included; secrets are never listed.",
      tag: ENDPOINTS,
      success: { schema: webhookEndpointListSchema, description: "Endpoints, newest first." },
    },
  },
  getWebhookEndpoint: {
    status: 200,
    present: (r) => webhookEndpointJson(r.webhookEndpoint!),
    operation: {
      summary: "Retrieve a webhook endpoint",
      description: "The endpoint's configuration and state; of its secret only the last 4 characters.",
      tag: ENDPOINTS,
      success: { schema: webhookEndpointSchema, description: "The endpoint, with `secret_last4`." },
    },
  },
  updateWebhookEndpoint: {
    status: 200,
    present: (r) => webhookEndpointJson(r.webhookEndpoint!),
    // null is a type error: every field of an endpoint has a value.
    patchNull: "invalid",
    operation: {
      summary: "Update a webhook endpoint",
      description:
        "Changes only the fields sent. `enabled: false` disables the endpoint and settles its pending deliveries as failed (`endpoint_disabled`); " +
        "`enabled: true` re-enables it and resets its consecutive failures.",
      tag: ENDPOINTS,
      success: { schema: webhookEndpointSchema, description: "The endpoint.", example: UPDATED_WEBHOOK_ENDPOINT_EXAMPLE },
      requestBody: { schema: updateWebhookEndpointRequestSchema, required: false },
      errors: ["invalid_webhook_url", "webhook_endpoint_exists"],
    },
  },
  deleteWebhookEndpoint: {
    status: 200,
    present: (r) => deletedWebhookEndpointJson(r.id),
    operation: {
      summary: "Delete a webhook endpoint",
      description: "Also removes its delivery history and pending deliveries. Irreversible.",
      tag: ENDPOINTS,
      success: { schema: deletedWebhookEndpointSchema, description: "The deleted endpoint's id." },
    },
  },
  rotateWebhookEndpointSecret: {
    status: 200,
    present: (r) => webhookEndpointWithSecretJson(r.webhookEndpoint!),
    operation: {
      summary: "Rotate the signing secret",
      description: "During the grace period both secrets sign every delivery, the new one first.",
      tag: ENDPOINTS,
      success: { schema: webhookEndpointWithSecretSchema, description: "The endpoint with its new secret, shown this once." },
      requestBody: { schema: rotateWebhookEndpointSecretRequestSchema, required: false },
    },
  },
  testWebhookEndpoint: {
    status: 200,
    present: (r) => webhookTestJson(r.webhookTest!),
    operation: {
      summary: "Send a test event",
      description: "Sends one signed `webhook.test` event now, never retried, also to a disabled endpoint; not counted toward automatic disabling.",
      tag: ENDPOINTS,
      success: { schema: webhookTestSchema, description: "The outcome of the attempt." },
    },
  },
  listWebhookDeliveries: {
    status: 200,
    present: (r, path) => jsonList(path, r.data.map(webhookDeliveryJson), r.hasMore),
    operation: {
      summary: "List an endpoint's deliveries",
      description: "Newest first; `status` filters by pending, succeeded or failed. Each delivery shows its last attempt.",
      tag: DELIVERIES,
      success: { schema: webhookDeliveryListSchema, description: "Deliveries, newest first." },
    },
  },
  getWebhookDelivery: {
    status: 200,
    present: (r) => webhookDeliveryJson(r.webhookDelivery!),
    operation: {
      summary: "Retrieve a delivery",
      description: "One delivery of an event to this endpoint: its status, attempt count, next attempt and last attempt.",
      tag: DELIVERIES,
      success: { schema: webhookDeliverySchema, description: "The delivery." },
    },
  },
  replayWebhookDelivery: {
    status: 200,
    present: (r) => webhookDeliveryJson(r.webhookDelivery!),
    operation: {
      summary: "Replay a settled delivery",
      description: "Starts a fresh cycle of up to 7 attempts with the same event id; the endpoint must be enabled.",
      tag: DELIVERIES,
      success: { schema: webhookDeliverySchema, description: "The delivery, now pending.", example: WEBHOOK_DELIVERY_EXAMPLES.replayed },
      errors: ["delivery_in_progress", "endpoint_disabled"],
    },
  },
  retryWebhookDelivery: {
    status: 200,
    present: (r) => webhookDeliveryJson(r.webhookDelivery!),
    operation: {
      summary: "Retry a pending delivery now",
      description:
        "Runs the pending delivery's next attempt at once instead of at its scheduled time; the attempts it is allowed stay as they were. " +
        "A settled delivery is invalid_state (replay it instead); an attempt in flight is delivery_in_progress; the endpoint must be enabled.",
      tag: DELIVERIES,
      success: { schema: webhookDeliverySchema, description: "The delivery, its next attempt due now.", example: WEBHOOK_DELIVERY_EXAMPLES.retried },
      errors: ["delivery_in_progress", "endpoint_disabled", "invalid_state"],
    },
  },
  recoverWebhookDeliveries: {
    status: 200,
    present: (r) => webhookRecoveryJson(r.webhookRecovery!),
    operation: {
      summary: "Recover failed deliveries",
      description:
        `Starts a fresh cycle for every failed delivery of the endpoint created in [since, until) (since at most ${MAX_RECOVERY_DAYS} days ago), ` +
        "oldest first and paced: their first attempts fall due one after another at the service's recovery rate per endpoint. " +
        "The endpoint must be enabled.",
      tag: DELIVERIES,
      success: { schema: webhookRecoverySchema, description: "What the recovery queued." },
      requestBody: { schema: recoverWebhookDeliveriesRequestSchema, required: true },
      errors: ["endpoint_disabled"],
    },
  },
});
