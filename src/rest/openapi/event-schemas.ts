// Schemas of events (docs/contract.md, "Event" and "Events"): the Event of
// the event log and, with `created` and `project_id`, the body of every webhook delivery.
import { EVENT_TYPES, type EventType } from "../../domain/event-types.ts";
import { closedObject, DATE_TIME, listOf, ref, type JsonSchema } from "./json-schema.ts";
import { transactionSchemas } from "./transaction-schemas.ts";

export const EVENT_ID_PATTERN = "^evt_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$";

/** What `data` holds, by the family of the event type (the part before the dot). */
const DATA_BY_FAMILY: Record<string, JsonSchema> = {
  user: closedObject({ object: ref("User") }),
  kyc: closedObject({ object: ref("Kyc") }),
  transaction: closedObject({ object: ref("Transaction") }),
  withdrawal: closedObject({ object: ref("Transaction") }),
  webhook: closedObject({ message: { type: "string" } }, { description: "`webhook.test`: a message, no object." }),
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

function eventSchema(extra: Record<string, JsonSchema>, description: string): JsonSchema {
  return {
    ...closedObject(
      {
        id: { type: "string", pattern: EVENT_ID_PATTERN, description: "`evt_` and a UUID; the same in the event log and in deliveries." },
        object: { const: "event" },
        type: { type: "string", enum: [...EVENT_TYPES], description: "More types may be added; subscribers to `*` receive them." },
        created_at: DATE_TIME,
        livemode: { type: "boolean" },
        ...extra,
        data: { type: "object" },
      },
      { description },
    ),
    allOf: dataRules(),
  };
}

export const eventSchemas: Record<string, JsonSchema> = {
  Event: eventSchema({}, "Something that happened in a project; kept 30 days. Never carries personal data such as the profile."),
  EventList: listOf("Event", "Events of the key's project and environment."),
  WebhookEvent: eventSchema(
    {
      created: { ...DATE_TIME, description: "Repeats `created_at`." },
      project_id: { type: "string", format: "uuid" },
    },
    "The body of a webhook delivery: the Event with `created` and `project_id`.",
  ),
  Kyc: closedObject({
    object: { const: "kyc" },
    user_id: { type: "string" },
    status: { type: "string" },
    livemode: { type: "boolean" },
  }),
  // The Transaction and the other money objects.
  ...transactionSchemas,
};
