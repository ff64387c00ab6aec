// Webhook endpoints, deliveries, test results and recoveries as public messages.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type WebhookDeliveryAttemptSchema,
  WebhookDeliverySchema,
  WebhookEndpointSchema,
  WebhookRecoverySchema,
  WebhookTestSchema,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookRecovery,
  type WebhookTest,
} from "../../gen/svc/v1/webhook_endpoints_pb.ts";
import type { RecoveryWindow } from "../domain/webhook-endpoint-rules.ts";
import { previousSecretInGrace } from "../domain/webhook-secrets.ts";
import { type DeliveryAttemptRecord, headersOf, type WebhookDeliveryDocument } from "../store/webhook-delivery-repository.ts";
import type { WebhookEndpointDocument } from "../store/webhook-endpoint-repository.ts";

/** `secret` is given only by creation and rotation; every other answer shows `secret_last4` alone. */
export function endpointMessage(doc: WebhookEndpointDocument, now: Date, options: { withSecret?: boolean } = {}): WebhookEndpoint {
  const inGrace = previousSecretInGrace(doc, now);
  return create(WebhookEndpointSchema, {
    id: doc._id,
    url: doc.url,
    description: doc.description,
    eventTypes: doc.event_types,
    enabled: doc.enabled,
    ...(doc.disabled_reason !== null ? { disabledReason: doc.disabled_reason } : {}),
    ...(options.withSecret ? { secret: doc.secret } : {}),
    secretLast4: doc.secret.slice(-4),
    ...(inGrace ? { previousSecretExpiresAt: timestampFromDate(doc.previous_secret_expires_at!) } : {}),
    livemode: doc.livemode,
    createdAt: timestampFromDate(doc.created_at),
    updatedAt: timestampFromDate(doc.updated_at),
  });
}

export function deliveryMessage(doc: WebhookDeliveryDocument): WebhookDelivery {
  // A record older than the history holds its last attempt alone.
  const history = doc.attempts ?? (doc.last_attempt !== null ? [doc.last_attempt] : []);
  return create(WebhookDeliverySchema, {
    id: doc._id,
    endpointId: doc.endpoint_id,
    eventId: doc.event_id,
    eventType: doc.event_type,
    status: doc.status,
    attemptCount: doc.attempt_count,
    ...(doc.next_attempt_at !== null ? { nextAttemptAt: timestampFromDate(doc.next_attempt_at) } : {}),
    ...(doc.last_attempt !== null ? { lastAttempt: attemptMessage(doc.last_attempt) } : {}),
    createdAt: timestampFromDate(doc.created_at),
    updatedAt: timestampFromDate(doc.updated_at),
    attempts: history.map(attemptMessage),
  });
}

function attemptMessage(attempt: DeliveryAttemptRecord): MessageInitShape<typeof WebhookDeliveryAttemptSchema> {
  const { request, response } = attempt;
  return {
    attemptedAt: timestampFromDate(attempt.attempted_at),
    ...(attempt.response_status !== null ? { responseStatus: attempt.response_status } : {}),
    ...(attempt.error !== null ? { error: attempt.error } : {}),
    durationMs: attempt.duration_ms,
    ...(request
      ? { request: { url: request.url, headers: headersOf(request.headers), body: request.body, bodyTruncated: request.body_truncated } }
      : {}),
    ...(response ? { response: { headers: headersOf(response.headers), body: response.body, bodyTruncated: response.body_truncated } } : {}),
  };
}

/** What a test attempt reports: `AttemptResult` of the delivery client, said without importing it. */
export interface TestOutcome {
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
  timings?: { dnsMs: number | null; connectMs: number | null; tlsMs: number | null; firstByteMs: number | null };
  errorDetail?: string | null;
}

/**
 * The outcome of one test attempt: the status answered (null without an answer), the error (null on success),
 * the phases' timings (unset where a phase did not happen) and, for `ssrf_blocked`, what was refused.
 */
export function testMessage(endpointId: string, eventId: string, result: TestOutcome): WebhookTest {
  const timings = result.timings ?? { dnsMs: null, connectMs: null, tlsMs: null, firstByteMs: null };
  return create(WebhookTestSchema, {
    endpointId,
    eventId,
    status: result.error === null ? "succeeded" : "failed",
    ...(result.responseStatus !== null ? { responseStatus: result.responseStatus } : {}),
    durationMs: result.durationMs,
    ...(result.error !== null ? { error: result.error } : {}),
    timings: {
      ...(timings.dnsMs !== null ? { dnsMs: timings.dnsMs } : {}),
      ...(timings.connectMs !== null ? { connectMs: timings.connectMs } : {}),
      ...(timings.tlsMs !== null ? { tlsMs: timings.tlsMs } : {}),
      ...(timings.firstByteMs !== null ? { firstByteMs: timings.firstByteMs } : {}),
    },
    ...(result.errorDetail ? { errorDetail: result.errorDetail } : {}),
  });
}

export function recoveryMessage(endpointId: string, window: RecoveryWindow, deliveriesQueued: number): WebhookRecovery {
  return create(WebhookRecoverySchema, {
    endpointId,
    since: timestampFromDate(window.since),
    until: timestampFromDate(window.until),
    deliveriesQueued,
  });
}
