// Field rules of webhook endpoints (docs/contract.md, Webhooks) besides the URL rules: event types, description,
// rotation grace period and the window of a recovery. Pure: no I/O.
import { validationError } from "./errors.ts";
import { SUBSCRIBABLE_EVENT_TYPES } from "./event-types.ts";
import { codePointLength } from "./text.ts";

export const MAX_EVENT_TYPES = 10;
export const MAX_DESCRIPTION_LENGTH = 500;
export const MAX_GRACE_PERIOD_HOURS = 168;
export const DEFAULT_GRACE_PERIOD_HOURS = 24;
export const DEFAULT_EVENT_TYPES: readonly string[] = ["*"];
/** How far back a recovery may start: events, and so what their deliveries would send, are kept this long. */
export const MAX_RECOVERY_DAYS = 30;

/** 1 to 10 distinct subscribable types, or exactly ["*"]; `param` names the field in refusals. */
export function checkEventTypes(types: readonly string[], param = "event_types"): string[] {
  if (types.length === 0) throw validationError(param, `${param} must list at least one event type, or be ["*"].`);
  if (types.includes("*")) {
    if (types.length > 1) throw validationError(param, '"*" subscribes to every type and must be the only entry.');
    return ["*"];
  }
  if (types.length > MAX_EVENT_TYPES) {
    throw validationError(param, `${param} may list at most ${MAX_EVENT_TYPES} event types.`);
  }
  for (const type of types) {
    if (!SUBSCRIBABLE_EVENT_TYPES.includes(type as never)) {
      throw validationError(
        param,
        `${JSON.stringify(type)} is not an event type one can subscribe to; use one of ${SUBSCRIBABLE_EVENT_TYPES.join(", ")}, or "*".`,
      );
    }
  }
  if (new Set(types).size !== types.length) throw validationError(param, `${param} must not list a type twice.`);
  return [...types];
}

/**
 * The event types of a new endpoint, from the two fields of a creation request: `listed`, the list with presence
 * (undefined when not sent), and `legacy`, the deprecated repeated field, in which an empty list cannot be told
 * from a missing one. A list sent empty is refused, as is a request that fills both fields; the deprecated field
 * alone is read as before (empty: the default); neither means the default, every type.
 */
export function eventTypesOfCreation(listed: readonly string[] | undefined, legacy: readonly string[]): string[] {
  if (listed === undefined) return checkEventTypes(legacy.length > 0 ? legacy : DEFAULT_EVENT_TYPES);
  if (legacy.length > 0) {
    throw validationError("event_types", "Send the event types in event_type_list or in the deprecated event_types field, not in both.");
  }
  if (listed.length === 0) throw validationError("event_types", "event_types must not be empty; leave it out for the default.");
  return checkEventTypes(listed);
}

export function checkDescription(description: string): string {
  if (codePointLength(description) > MAX_DESCRIPTION_LENGTH) {
    throw validationError("description", `description must be at most ${MAX_DESCRIPTION_LENGTH} characters long.`);
  }
  return description;
}

export function checkGracePeriodHours(hours: number | undefined): number {
  if (hours === undefined) return DEFAULT_GRACE_PERIOD_HOURS;
  if (!Number.isInteger(hours) || hours < 0 || hours > MAX_GRACE_PERIOD_HOURS) {
    throw validationError("grace_period_hours", `grace_period_hours must be an integer from 0 to ${MAX_GRACE_PERIOD_HOURS}.`);
  }
  return hours;
}

export interface RecoveryWindow {
  /** Included. */
  since: Date;
  /** Excluded. */
  until: Date;
}

/** `since` required, at most MAX_RECOVERY_DAYS ago and not in the future; `until` (default now) later than it. */
export function checkRecoveryWindow(since: Date | undefined, until: Date | undefined, now: Date): RecoveryWindow {
  if (since === undefined) throw validationError("since", "since is required.");
  if (since.getTime() < now.getTime() - MAX_RECOVERY_DAYS * 86_400_000) {
    throw validationError("since", `since must be at most ${MAX_RECOVERY_DAYS} days ago.`);
  }
  if (since.getTime() > now.getTime()) throw validationError("since", "since must not be in the future.");
  const end = until ?? now;
  if (end.getTime() <= since.getTime()) throw validationError("until", "until must be later than since.");
  return { since, until: end };
}
