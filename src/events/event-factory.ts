// Every event the service emits is built here, so each type has one shape: `evt_` id, type, time, and
// `data.object` rendered from the state the event reports (the User as its responses show it, never its
// profile), or `data.message` for a test.
import type { EventType } from "../domain/event-types.ts";
import { newEventId } from "../domain/ids.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";
import type { TransactionEventType } from "../domain/transaction-transitions.ts";
import { transactionEventObject } from "../messages/transaction-messages.ts";
import { userEventObject } from "../messages/user-messages.ts";
import { kycJson } from "../representations/kyc-sessions.ts";
import type { EventDocument } from "../store/event-repository.ts";
import type { OutboxEvent } from "../store/outbox.ts";
import type { TransactionRecord } from "../store/transaction-repository.ts";
import type { UserDocument } from "../store/user-document.ts";

export type UserEventType = Extract<EventType, `user.${string}`>;

const TEST_EVENT_MESSAGE = "A test event sent from Svc to check this endpoint.";

/**
 * An event about a user, for the user's outbox. `id` and `createdAt` are given when an event not yet relayed
 * is rebuilt from the user's newer state (the wallet made right after creation).
 */
export function userEvent(type: UserEventType, user: UserDocument, createdAt: Date, id: string = newEventId()): OutboxEvent {
  return { id, type, created_at: createdAt, data: { object: userEventObject(user) } };
}

export type KycEventType = Extract<EventType, `kyc.${string}`>;

/**
 * A `kyc.*` event for the user's outbox, written in the same update as the `kyc_status` it reports: its Kyc
 * object carries that new status.
 */
export function kycEvent(type: KycEventType, user: Pick<UserDocument, "_id" | "livemode" | "kyc_status">, createdAt: Date): OutboxEvent {
  return { id: newEventId(), type, created_at: createdAt, data: { object: kycJson(user._id, user.kyc_status, user.livemode) } };
}

/**
 * The events of one write of a transaction, for its wallet owner's outbox: each `data.object` is the Transaction at
 * the state that write gives it, as GET /v1/transactions/{id} shows it then, rendered once for all of them (a
 * completed withdrawal emits two).
 */
export function transactionEvents(types: readonly TransactionEventType[], record: TransactionRecord, createdAt: Date): OutboxEvent[] {
  if (types.length === 0) return [];
  const object = transactionEventObject(record);
  return types.map((type) => ({ id: newEventId(), type, created_at: createdAt, data: { object } }));
}

/** An outbox event as the event log holds it, not yet fanned out. */
export function loggedFromOutbox(owner: { project_id: string; livemode: boolean }, event: OutboxEvent): EventDocument {
  return {
    _id: event.id,
    project_id: owner.project_id,
    livemode: owner.livemode,
    type: event.type,
    created_at: event.created_at,
    data: event.data,
    fanned_out: false,
  };
}

/** An event another service publishes (its object already checked against the type's table). */
export function publishedEvent(scope: TenantScope, type: EventType, object: Record<string, unknown>, createdAt: Date): EventDocument {
  return {
    _id: newEventId(),
    project_id: scope.projectId,
    livemode: scope.livemode,
    type,
    created_at: createdAt,
    data: { object },
    fanned_out: false,
  };
}

/** The `webhook.test` event of one endpoint: logged, but sent to that endpoint alone, once, outside fan-out. */
export function testEvent(endpoint: { project_id: string; livemode: boolean }, createdAt: Date): EventDocument {
  return {
    _id: newEventId(),
    project_id: endpoint.project_id,
    livemode: endpoint.livemode,
    type: "webhook.test",
    created_at: createdAt,
    data: { message: TEST_EVENT_MESSAGE },
    fanned_out: true,
  };
}
