// A webhook endpoint for a benchmark: enabled, subscribed to every event type, with a fresh secret.
import { newUuid } from "../src/domain/random.ts";
import { generateWebhookSecret } from "../src/domain/webhook-signature.ts";
import type { WebhookEndpointRepository } from "../src/store/webhook-endpoint-repository.ts";

export async function addBenchEndpoint(endpoints: WebhookEndpointRepository, projectId: string, url: string): Promise<string> {
  const now = new Date();
  const id = newUuid();
  await endpoints.insert({
    _id: id,
    project_id: projectId,
    livemode: false,
    url,
    description: "",
    event_types: ["*"],
    enabled: true,
    disabled_reason: null,
    secret: generateWebhookSecret(),
    previous_secret: null,
    previous_secret_expires_at: null,
    consecutive_failures: 0,
    created_at: now,
    updated_at: now,
  });
  return id;
}
