// The event types (docs/contract.md, Events). Subscribers to "*" also receive types added later.
export const EVENT_TYPES = [
  "user.created",
  "user.suspended",
  "user.unsuspended",
  "kyc.approved",
  "kyc.rejected",
  "transaction.received",
  "transaction.completed",
  "withdrawal.completed",
  "withdrawal.failed",
  "webhook.test",
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** Types an endpoint may subscribe to: every type but `webhook.test`, which goes only to the endpoint tested. */
export const SUBSCRIBABLE_EVENT_TYPES: readonly EventType[] = EVENT_TYPES.filter((t) => t !== "webhook.test");

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}
