// A webhook endpoint for a benchmark: enabled, subscribed to every event type, with a fresh secret.
import { newUuid } from "../src/domain/random.ts";
import { newWebhookEndpoint, type WebhookEndpointRepository } from "../src/store/webhook-endpoint-repository.ts";

export async function addBenchEndpoint(endpoints: WebhookEndpointRepository, projectId: string, url: string): Promise<string> {
  const endpoint = newWebhookEndpoint({
    id: newUuid(),
    scope: { projectId, livemode: false },
    url,
    description: "",
    eventTypes: ["*"],
    now: new Date(),
  });
  await endpoints.insert(endpoint);
  return endpoint._id;
}
