// What one attempt sends: the Event with `created` and `project_id` as body, signed with every active secret of
// the endpoint (the new one first during a rotation grace period), and the Svc-* headers.
import type { Clock } from "../domain/clock.ts";
import { activeSecrets } from "../domain/webhook-secrets.ts";
import { deliveryHeaders } from "../domain/webhook-signature.ts";
import { webhookBodyOf } from "../representations/events.ts";
import { eventMessage } from "../messages/event-messages.ts";
import type { EventDocument } from "../store/event-repository.ts";
import type { WebhookEndpointDocument } from "../store/webhook-endpoint-repository.ts";
import type { LookupAll } from "./address-vetting.ts";
import type { AttemptConnections } from "./attempt-connections.ts";
import { postWebhook, type AttemptResult } from "./delivery-client.ts";
import type { InFlightAttempts } from "./in-flight-attempts.ts";

export interface SendSettings {
  timeoutMs: number;
  /** Name resolution of receivers; tests inject one. */
  lookup?: LookupAll;
  clock: Clock;
  /** Ports refused on sandbox loopback URLs (the service's and its database's); see `checkWebhookUrl`. */
  refusedLoopbackPorts?: ReadonlySet<number>;
  /** Where attempts in flight are cut short (the delivery of a stopping process); see `WebhookDelivery.stop`. */
  inFlight?: InFlightAttempts;
  /** Keep-alive connections by vetted address (a delivering process's); absent, each attempt connects anew. */
  connections?: AttemptConnections;
}

/** Bodies by event document: fan-out hands the same document to every endpoint of the event. */
const bodies = new WeakMap<EventDocument, string>();

/** The raw webhook body: the Event object plus `created` (repeating `created_at`) and `project_id`. */
function webhookBody(event: EventDocument): string {
  let body = bodies.get(event);
  if (body === undefined) {
    // The body is `data_json`'s text: the deprecated Struct would be built for nothing.
    body = webhookBodyOf(eventMessage(event, { structData: false }), event.project_id);
    bodies.set(event, body);
  }
  return body;
}

/** Signs and posts `event` to `endpoint` as attempt number `attempt`. Network outcomes are returned, not thrown. */
export function sendSignedEvent(
  endpoint: WebhookEndpointDocument,
  event: EventDocument,
  attempt: number,
  settings: SendSettings,
): Promise<AttemptResult> {
  const now = settings.clock();
  const body = webhookBody(event);
  return postWebhook({
    url: endpoint.url,
    body,
    headers: deliveryHeaders({
      secrets: activeSecrets(endpoint, now),
      timestamp: Math.floor(now.getTime() / 1000),
      body,
      eventId: event._id,
      eventType: event.type,
      attempt,
    }),
    timeoutMs: settings.timeoutMs,
    livemode: endpoint.livemode,
    ...(settings.lookup ? { lookup: settings.lookup } : {}),
    ...(settings.refusedLoopbackPorts ? { refusedLoopbackPorts: settings.refusedLoopbackPorts } : {}),
    ...(settings.inFlight ? { inFlight: settings.inFlight } : {}),
    ...(settings.connections ? { connections: settings.connections } : {}),
  });
}
