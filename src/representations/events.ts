// The Event object, in the event log and (with `created` and `project_id`) in webhook bodies.
import type { Event } from "../../gen/svc/v1/events_pb.ts";
import { requiredIsoTime } from "./json-values.ts";

export interface EventJson {
  id: string;
  object: "event";
  type: string;
  created_at: string;
  livemode: boolean;
  data: unknown;
}

export function eventJson(event: Event): EventJson {
  return {
    id: event.id,
    object: "event",
    type: event.type,
    created_at: requiredIsoTime(event.createdAt),
    livemode: event.livemode,
    data: event.data ?? {},
  };
}
