// The REST surface of svc.v1.EventsService.
import { EventsService } from "../../gen/svc/v1/events_pb.ts";
import { eventJson, eventListSchema, eventSchema } from "../representations/events.ts";
import { jsonList } from "../representations/json-values.ts";
import { describeService } from "./method-description.ts";

const TAG = "Events";

export const eventsApi = describeService(EventsService, {
  listEvents: {
    status: 200,
    present: (r, path) => jsonList(path, r.data.map(eventJson), r.hasMore),
    operation: {
      summary: "List events",
      description: "The events of the key's project and environment of the last 30 days, newest first; `type` filters by event type.",
      tag: TAG,
      success: { schema: eventListSchema, description: "Events, newest first." },
    },
  },
  getEvent: {
    status: 200,
    present: (r) => eventJson(r.event!),
    operation: {
      summary: "Retrieve an event",
      description: "An event of the last 30 days, as its webhook deliveries carry it (without `created` and `project_id`).",
      tag: TAG,
      success: { schema: eventSchema, description: "The event." },
    },
  },
});
