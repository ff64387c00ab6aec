// The `data.object` of events published by other services, checked against the Transaction shape
// (docs/contract.md, Event) so receivers always get the documented shape. `kyc.*` events are not published:
// KYC sessions emit them from their own decisions, so the event and the user's kyc_status always agree.
import { validationError } from "./errors.ts";
import { parseDateTime } from "./date-time.ts";

type FieldKind = "string" | "number" | "boolean" | "date-time";

const TRANSACTION_FIELDS: Record<string, FieldKind> = {
  id: "string",
  object: "string",
  user_id: "string",
  type: "string",
  direction: "string",
  amount_usd: "number",
  fee_usd: "number",
  status: "string",
  fiat_currency: "string",
  fiat_amount: "number",
  livemode: "boolean",
  created_at: "date-time",
};

/** What each type promises about its object beyond the field table. */
const TYPE_RULES: Record<string, { fields: Record<string, FieldKind>; equals: Record<string, string> }> = {
  "transaction.received": { fields: TRANSACTION_FIELDS, equals: { object: "transaction", direction: "in" } },
  "transaction.completed": { fields: TRANSACTION_FIELDS, equals: { object: "transaction", status: "completed" } },
  "withdrawal.completed": { fields: TRANSACTION_FIELDS, equals: { object: "transaction", type: "withdrawal", status: "completed" } },
  "withdrawal.failed": { fields: TRANSACTION_FIELDS, equals: { object: "transaction", type: "withdrawal", status: "failed" } },
};

function hasKind(value: unknown, kind: FieldKind): boolean {
  switch (kind) {
    case "date-time":
      return typeof value === "string" && parseDateTime(value) !== null;
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    default:
      return typeof value === kind;
  }
}

/**
 * Checks `object` for an event of `type` published in `livemode`; answers it with `created_at` normalised.
 * Errors name the offending member as `object.<field>`.
 */
export function checkPublishedObject(type: string, object: Record<string, unknown>, livemode: boolean): Record<string, unknown> {
  const rules = TYPE_RULES[type];
  if (!rules) throw validationError("type", `type must be one of ${Object.keys(TYPE_RULES).join(", ")}.`);
  for (const name of Object.keys(object)) {
    if (!Object.hasOwn(rules.fields, name)) throw validationError(`object.${name}`, `Unknown field object.${name}.`);
  }
  for (const [name, kind] of Object.entries(rules.fields)) {
    if (!hasKind(object[name], kind)) throw validationError(`object.${name}`, `object.${name} is required and must be a ${kind}.`);
  }
  for (const [name, expected] of Object.entries(rules.equals)) {
    if (object[name] !== expected) throw validationError(`object.${name}`, `object.${name} must be "${expected}" for ${type}.`);
  }
  if (object.livemode !== livemode) throw validationError("object.livemode", "object.livemode must match the environment published to.");
  const normalised = { ...object };
  if (typeof object.created_at === "string") normalised.created_at = parseDateTime(object.created_at)!.toISOString();
  return normalised;
}
