// What the route table cannot say about each public method: its summary, success answer, request body schema
// and the codes only it answers. Codes every route of a kind answers (keys, idempotency, lists, lookups of
// path ids) are added by the document from the route itself.
import type { ErrorCode } from "../domain/errors.ts";

export interface OperationDoc {
  summary: string;
  description?: string;
  tag: string;
  success: { status: 200 | 201; schema: string; description: string };
  /** Schema of the JSON body; methods without one refuse any field (422 validation_error). */
  requestBody?: { schema: string; required: boolean };
  /** Codes of the method's own rules and conflicts. */
  errors?: ErrorCode[];
}

const USERS = "Users";
const EVENTS = "Events";
const ENDPOINTS = "Webhook endpoints";
const DELIVERIES = "Webhook deliveries";

/** By `<service type name>.<method name>`. */
export const OPERATIONS: Record<string, OperationDoc> = {
  "svc.v1.UsersService.CreateUser": {
    summary: "Create a user",
    description: "In sandbox the user is verified and gets a simulated wallet; in live `verified` is false until the phone is verified. Emits `user.created`.",
    tag: USERS,
    success: { status: 201, schema: "User", description: "The user, without profile." },
    requestBody: { schema: "CreateUserRequest", required: true },
    errors: ["user_already_exists", "tagname_already_taken"],
  },
  "svc.v1.UsersService.GetUser": {
    summary: "Retrieve a user with its profile",
    tag: USERS,
    success: { status: 200, schema: "UserWithProfile", description: "The user with `profile`." },
  },
  "svc.v1.UsersService.UpdateUser": {
    summary: "Update a user's profile",
    tag: USERS,
    success: { status: 200, schema: "UserWithProfile", description: "The user with `profile`." },
    requestBody: { schema: "UpdateUserRequest", required: false },
    errors: ["tagname_already_taken", "user_already_exists"],
  },
  "svc.v1.UsersService.ListUserWallets": {
    summary: "List a user's wallets",
    tag: USERS,
    success: { status: 200, schema: "WalletList", description: "The user's wallets." },
  },
  "svc.v1.UsersService.GetSignupConfig": {
    summary: "Retrieve the published signup flow",
    tag: USERS,
    success: { status: 200, schema: "SignupConfig", description: "The signup flow of the key's project and environment." },
  },
  "svc.v1.EventsService.ListEvents": {
    summary: "List events",
    tag: EVENTS,
    success: { status: 200, schema: "EventList", description: "Events, newest first." },
  },
  "svc.v1.EventsService.GetEvent": {
    summary: "Retrieve an event",
    tag: EVENTS,
    success: { status: 200, schema: "Event", description: "The event." },
  },
  "svc.v1.WebhookEndpointsService.CreateWebhookEndpoint": {
    summary: "Create a webhook endpoint",
    description: "At most 20 endpoints per project and environment; the URL is unique among them.",
    tag: ENDPOINTS,
    success: { status: 201, schema: "WebhookEndpointWithSecret", description: "The endpoint with its signing secret, shown this once." },
    requestBody: { schema: "CreateWebhookEndpointRequest", required: true },
    errors: ["invalid_webhook_url", "webhook_endpoint_exists", "webhook_endpoint_limit"],
  },
  "svc.v1.WebhookEndpointsService.ListWebhookEndpoints": {
    summary: "List webhook endpoints",
    tag: ENDPOINTS,
    success: { status: 200, schema: "WebhookEndpointList", description: "Endpoints, newest first." },
  },
  "svc.v1.WebhookEndpointsService.GetWebhookEndpoint": {
    summary: "Retrieve a webhook endpoint",
    tag: ENDPOINTS,
    success: { status: 200, schema: "WebhookEndpoint", description: "The endpoint, with `secret_last4`." },
  },
  "svc.v1.WebhookEndpointsService.UpdateWebhookEndpoint": {
    summary: "Update a webhook endpoint",
    tag: ENDPOINTS,
    success: { status: 200, schema: "WebhookEndpoint", description: "The endpoint." },
    requestBody: { schema: "UpdateWebhookEndpointRequest", required: false },
    errors: ["invalid_webhook_url", "webhook_endpoint_exists"],
  },
  "svc.v1.WebhookEndpointsService.DeleteWebhookEndpoint": {
    summary: "Delete a webhook endpoint",
    description: "Also removes its delivery history and pending deliveries. Irreversible.",
    tag: ENDPOINTS,
    success: { status: 200, schema: "DeletedWebhookEndpoint", description: "The deleted endpoint's id." },
  },
  "svc.v1.WebhookEndpointsService.RotateWebhookEndpointSecret": {
    summary: "Rotate the signing secret",
    description: "During the grace period both secrets sign every delivery, the new one first.",
    tag: ENDPOINTS,
    success: { status: 200, schema: "WebhookEndpointWithSecret", description: "The endpoint with its new secret, shown this once." },
    requestBody: { schema: "RotateWebhookEndpointSecretRequest", required: false },
  },
  "svc.v1.WebhookEndpointsService.TestWebhookEndpoint": {
    summary: "Send a test event",
    description: "Sends one signed `webhook.test` event now, never retried, also to a disabled endpoint; not counted toward automatic disabling.",
    tag: ENDPOINTS,
    success: { status: 200, schema: "WebhookTest", description: "The outcome of the attempt." },
  },
  "svc.v1.WebhookEndpointsService.ListWebhookDeliveries": {
    summary: "List an endpoint's deliveries",
    tag: DELIVERIES,
    success: { status: 200, schema: "WebhookDeliveryList", description: "Deliveries, newest first." },
  },
  "svc.v1.WebhookEndpointsService.GetWebhookDelivery": {
    summary: "Retrieve a delivery",
    tag: DELIVERIES,
    success: { status: 200, schema: "WebhookDelivery", description: "The delivery." },
  },
  "svc.v1.WebhookEndpointsService.ReplayWebhookDelivery": {
    summary: "Replay a settled delivery",
    description: "Starts a fresh cycle of up to 7 attempts with the same event id; the endpoint must be enabled.",
    tag: DELIVERIES,
    success: { status: 200, schema: "WebhookDelivery", description: "The delivery, now pending." },
    errors: ["delivery_in_progress", "endpoint_disabled"],
  },
};
