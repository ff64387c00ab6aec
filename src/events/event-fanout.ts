// Where logged events go next: the webhooks module creates one delivery per matching endpoint.

import type { EventDocument } from "../store/event-repository.ts";

export interface EventFanout {
  /**
   * Creates the deliveries of these events for every enabled endpoint of their project and environment
   * whose event types match. Idempotent: running it twice for an event creates nothing twice. `relayedBefore` names
   * the events logged by an earlier relay (this one runs again): their deliveries may be under way elsewhere.
   */
  fanOut(events: readonly EventDocument[], relayedBefore?: ReadonlySet<string>): Promise<void>;
}
