// The OpenAPI `webhooks` entry: the signed POST the service makes to every endpoint (docs/contract.md,
// "Delivery request" and "Signing and verification"), so receivers can be generated from the same document.
import { webhookEventSchema } from "../../representations/events.ts";
import type { JsonSchema } from "../../representations/json-schema.ts";

const header = (name: string, description: string, schema: JsonSchema): JsonSchema => ({ name, in: "header", required: true, description, schema });

export const webhookDeliveryRequest: JsonSchema = {
  post: {
    summary: "A signed event delivery",
    description:
      "Verify `Svc-Signature` over `<t>.<raw body>` (HMAC-SHA256, hex, keyed with the whole `whsec_` secret), rejecting timestamps more than 300 s away. " +
      "The event id is the idempotency key: an event may arrive more than once and out of order. Redirects are never followed.",
    operationId: "receiveWebhookEvent",
    // Authenticated by Svc-Signature, not by an API key.
    security: [],
    parameters: [
      header("Svc-Signature", "`t=<unix seconds>,v1=<hex>`; during a rotation grace period two `v1` values, the new secret's first.", {
        type: "string",
        pattern: "^t=\\d+(,v1=[0-9a-f]{64}){1,2}$",
      }),
      header("Svc-Event-Id", "The event id.", { type: "string" }),
      header("Svc-Event-Type", "The event type.", { type: "string" }),
      header("Svc-Delivery-Attempt", "The attempt number.", { type: "integer", minimum: 1, maximum: 7 }),
      header("User-Agent", "`Svc-Webhooks/1.0`.", { type: "string" }),
    ],
    requestBody: { required: true, content: { "application/json": { schema: webhookEventSchema } } },
    responses: {
      "2XX": { description: "Any 2xx answer acknowledges the event; the body is ignored." },
      default: {
        description:
          "Anything else, or no answer within 10 seconds, is a failure: retried after 1 min, 5 min, 30 min, 2 h, 6 h and 24 h, 7 attempts at most.",
      },
    },
  },
};
