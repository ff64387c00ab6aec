// The EventFanout of webhooks: one delivery record per (event, matching enabled endpoint of the event's project
// and environment), inserted in one batch and idempotently (unique per event and endpoint), then handed to the
// in-process dispatcher so the first attempts start at once.
import type { Clock } from "../domain/clock.ts";
import { newDeliveryId } from "../domain/ids.ts";
import type { EventFanout } from "../services/event-fanout.ts";
import type { EventDocument } from "../store/event-repository.ts";
import type { WebhookDeliveryDocument, WebhookDeliveryRepository } from "../store/webhook-delivery-repository.ts";
import type { WebhookEndpointDocument, WebhookEndpointRepository } from "../store/webhook-endpoint-repository.ts";
import type { AttemptHints } from "./delivery-worker.ts";

export interface FanoutDependencies {
  endpoints: WebhookEndpointRepository;
  deliveries: WebhookDeliveryRepository;
  clock: Clock;
  /** Starts the first attempt of a delivery just recorded. */
  dispatch: (deliveryId: string, hints: AttemptHints) => void;
  maxPendingPerEndpoint: number;
}

export function subscribes(endpoint: WebhookEndpointDocument, type: string): boolean {
  return endpoint.event_types.includes("*") || endpoint.event_types.includes(type);
}

function groupByScope(events: readonly EventDocument[]): EventDocument[][] {
  const groups = new Map<string, EventDocument[]>();
  for (const event of events) {
    // webhook.test goes only to the endpoint tested, never through fan-out.
    if (event.type === "webhook.test") continue;
    const key = `${event.project_id}\u0000${event.livemode}`;
    const group = groups.get(key);
    if (group) group.push(event);
    else groups.set(key, [event]);
  }
  return [...groups.values()];
}

export class WebhookFanout implements EventFanout {
  constructor(private readonly deps: FanoutDependencies) {}

  async fanOut(events: readonly EventDocument[]): Promise<void> {
    await Promise.all(groupByScope(events).map((group) => this.fanOutScope(group)));
  }

  private async fanOutScope(events: EventDocument[]): Promise<void> {
    const { endpoints, deliveries, clock } = this.deps;
    const first = events[0]!;
    const enabled = await endpoints.findEnabled({ projectId: first.project_id, livemode: first.livemode });
    const now = clock();
    const records: WebhookDeliveryDocument[] = [];
    const hints = new Map<string, AttemptHints>();
    await Promise.all(
      enabled.map(async (endpoint) => {
        const matching = events.filter((event) => subscribes(endpoint, event.type));
        if (matching.length === 0) return;
        let room = this.deps.maxPendingPerEndpoint - (await deliveries.countPending(endpoint._id, this.deps.maxPendingPerEndpoint));
        for (const event of matching) {
          const queued = room > 0;
          room -= 1;
          const record = deliveryRecord(endpoint, event, now, queued);
          records.push(record);
          if (queued) hints.set(record._id, { event, endpoint });
        }
      }),
    );
    const inserted = await deliveries.insertManyOnce(records);
    for (const [id, hint] of hints) if (inserted.has(id)) this.deps.dispatch(id, hint);
  }
}

/** A pending delivery due now, or (queue full) one already failed with 0 attempts, visible and replayable. */
function deliveryRecord(endpoint: WebhookEndpointDocument, event: EventDocument, now: Date, queued: boolean): WebhookDeliveryDocument {
  return {
    _id: newDeliveryId(),
    project_id: event.project_id,
    livemode: event.livemode,
    endpoint_id: endpoint._id,
    event_id: event._id,
    event_type: event.type,
    status: queued ? "pending" : "failed",
    attempt_count: 0,
    next_attempt_at: queued ? now : null,
    last_attempt: queued ? null : { attempted_at: now, response_status: null, error: "queue_full", duration_ms: 0 },
    lease_until: null,
    created_at: now,
    updated_at: now,
  };
}
