// REST answers of svc.v1.EventsService.
import type { GetEventResponse, ListEventsResponse } from "../../../gen/svc/v1/events_pb.ts";
import { eventJson } from "../../representations/events.ts";
import { jsonList } from "../../representations/json-values.ts";
import type { ResponderTable } from "../responders.ts";

export const eventResponders: ResponderTable = {
  "svc.v1.EventsService.ListEvents": (r: ListEventsResponse, path) => ({ status: 200, body: jsonList(path, r.data.map(eventJson), r.hasMore) }),
  "svc.v1.EventsService.GetEvent": (r: GetEventResponse) => ({ status: 200, body: eventJson(r.event!) }),
};
