// Events as they are logged, for the open event streams of this process: the event log's live feed
// (store/live-inserts.ts), each subscription filtered by event types.
import type { EventDocument, EventRepository } from "../store/event-repository.ts";
import { LiveInserts, type LiveInsertsOptions } from "../store/live-inserts.ts";

export type LiveEventsOptions = LiveInsertsOptions;

export class LiveEvents extends LiveInserts<EventDocument, readonly string[]> {
  constructor(events: EventRepository, options: LiveEventsOptions) {
    super(
      events,
      (types) => {
        const wanted = new Set(types);
        return (event) => wanted.has(event.type);
      },
      options,
    );
  }
}
