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

/** The raw body of a webhook delivery of `event`: the Event object plus `created` (repeating `created_at`) and `project_id`. */
export function webhookBodyOf(event: Event, projectId: string): string {
  const json = eventJson(event);
  return JSON.stringify({
    id: json.id,
    object: json.object,
    type: json.type,
    created_at: json.created_at,
    created: json.created_at,
    project_id: projectId,
    livemode: json.livemode,
    data: json.data,
  });
}
