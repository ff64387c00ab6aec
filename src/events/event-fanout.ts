// Where logged events go next: the webhooks module creates one delivery per matching endpoint.

import type { EventDocument } from "../store/event-repository.ts";

export interface EventFanout {
  /**
   * Creates the deliveries of these events for every enabled endpoint of their project and environment
   * whose event types match. Idempotent: running it twice for an event creates nothing twice.
   */
  fanOut(events: readonly EventDocument[]): Promise<void>;
}
