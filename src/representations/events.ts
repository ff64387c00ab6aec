// The Event object (docs/contract.md, Event), in the event log and, with `created` and `project_id`, as the body of
// every webhook delivery: schemas, examples and presenters.
import type { Event } from "../../gen/svc/v1/events_pb.ts";
import { EVENT_TYPES, type EventType } from "../domain/event-types.ts";
import { CREATED_AT, EVENT_ID } from "./example-values.ts";
import {
  closedObject,
  constant,
  dateTime,
  exampleList,
  type JsonSchema,
  listOf,
  named,
  type Static,
  stringEnum,
  type TProperties,
  Type,
} from "./json-schema.ts";
import { requiredIsoTime } from "./json-values.ts";
import { kycSchema } from "./kyc-sessions.ts";
import { transactionSchema } from "./transactions.ts";
import { USER_EXAMPLE, userSchema } from "./users.ts";

export const EVENT_ID_PATTERN = "^evt_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$";

/** What `data` holds, by the family of the event type (the part before the dot). */
const DATA_BY_FAMILY: Record<string, JsonSchema> = {
  user: closedObject({ object: userSchema }),
  kyc: closedObject({ object: kycSchema }),
  transaction: closedObject({ object: transactionSchema }),
  withdrawal: closedObject({ object: transactionSchema }),
  webhook: closedObject({ message: Type.String() }, { description: "`webhook.test`: a message, no object." }),
};

function familyOf(type: EventType): string {
  const family = type.slice(0, type.indexOf("."));
  if (!DATA_BY_FAMILY[family]) throw new Error(`event type ${type}: no data schema for the family "${family}"`);
  return family;
}

/** One `if type is one of … then data is …` rule per family, so each event is checked against its own data. */
function dataRules(): JsonSchema[] {
  const typesByFamily = new Map<string, EventType[]>();
  for (const type of EVENT_TYPES) typesByFamily.set(familyOf(type), [...(typesByFamily.get(familyOf(type)) ?? []), type]);
  return [...typesByFamily].map(([family, types]) => ({
    if: { properties: { type: { enum: types } } },
    then: { properties: { data: DATA_BY_FAMILY[family] } },
  }));
}

function eventSchemaWith<P extends TProperties>(extra: P, description: string) {
  return closedObject(
    {
      id: Type.String({ pattern: EVENT_ID_PATTERN, description: "`evt_` and a UUID; the same in the event log and in deliveries." }),
      object: constant("event"),
      type: stringEnum(EVENT_TYPES, { description: "More types may be added; subscribers to `*` receive them." }),
      created_at: dateTime(),
      livemode: Type.Boolean(),
      ...extra,
      data: Type.Unsafe<Record<string, unknown>>({ type: "object" }),
    },
    { description, allOf: dataRules() },
  );
}

export const eventSchema = eventSchemaWith(
  {},
  "Something that happened in a project; kept 30 days. Never carries personal data such as the profile.",
);
export type EventJson = Static<typeof eventSchema>;
const EVENT_EXAMPLE: EventJson = {
  id: EVENT_ID,
  object: "event",
  type: "user.created",
  created_at: CREATED_AT,
  livemode: false,
  data: { object: USER_EXAMPLE },
};
named("Event", eventSchema, [EVENT_EXAMPLE]);

export const eventListSchema = listOf(eventSchema, "Events of the key's project and environment.");
named("EventList", eventListSchema, [exampleList("/v1/events", [EVENT_EXAMPLE])]);

export const webhookEventSchema = eventSchemaWith(
  { created: dateTime("Repeats `created_at`."), project_id: Type.String({ format: "uuid" }) },
  "The body of a webhook delivery: the Event with `created` and `project_id`.",
);
named("WebhookEvent", webhookEventSchema, [{ ...EVENT_EXAMPLE, created: CREATED_AT, project_id: "5b1e7c2a-9d44-4f3b-8a6e-2c0f1d9e7b35" }]);

/**
 * The event's data as JSON text: `data_json`, the exact text the service wrote; from the deprecated Struct only for
 * a message without it (a service of a version before `data_json`).
 */
function eventDataJson(event: Event): string {
  return event.dataJson !== "" ? event.dataJson : JSON.stringify(event.data ?? {});
}

export function eventJson(event: Event): EventJson {
  return {
    id: event.id,
    object: "event",
    type: event.type,
    created_at: requiredIsoTime(event.createdAt),
    livemode: event.livemode,
    data: JSON.parse(eventDataJson(event)),
  };
}

/** A webhook delivery's Event object but its `data`, which comes last. */
function webhookEventHead(event: Event, projectId: string): Omit<Static<typeof webhookEventSchema>, "data"> {
  const createdAt = requiredIsoTime(event.createdAt);
  return {
    id: event.id,
    object: "event",
    type: event.type,
    created_at: createdAt,
    created: createdAt,
    project_id: projectId,
    livemode: event.livemode,
  };
}

/**
 * The raw body of a webhook delivery of `event`: its `data` spliced in last as `data_json`'s text, so that what
 * `svc listen` forwards from a stream is byte for byte what a delivery of the event sends.
 */
export function webhookBodyOf(event: Event, projectId: string): string {
  const head = JSON.stringify(webhookEventHead(event, projectId));
  return `${head.slice(0, -1)},"data":${eventDataJson(event)}}`;
}
