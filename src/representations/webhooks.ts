// The webhook_endpoint, webhook_delivery, webhook_test and webhook_recovery objects, field for field as docs/contract.md, Resources, lists
// them: every field present (null where unset), except `secret`, which only creation and rotation carry.
import type {
  WebhookDelivery,
  WebhookDeliveryAttempt,
  WebhookEndpoint,
  WebhookRecovery,
  WebhookTest,
} from "../../gen/svc/v1/webhook_endpoints_pb.ts";
import { isoTime, orNull, requiredIsoTime } from "./json-values.ts";

export function webhookEndpointJson(endpoint: WebhookEndpoint): Record<string, unknown> {
  return {
    id: endpoint.id,
    object: "webhook_endpoint",
    url: endpoint.url,
    description: endpoint.description,
    event_types: [...endpoint.eventTypes],
    enabled: endpoint.enabled,
    disabled_reason: orNull(endpoint.disabledReason),
    ...(endpoint.secret !== undefined ? { secret: endpoint.secret } : {}),
    secret_last4: endpoint.secretLast4,
    previous_secret_expires_at: isoTime(endpoint.previousSecretExpiresAt),
    livemode: endpoint.livemode,
    created_at: requiredIsoTime(endpoint.createdAt),
    updated_at: requiredIsoTime(endpoint.updatedAt),
  };
}

export function webhookDeliveryJson(delivery: WebhookDelivery): Record<string, unknown> {
  return {
    id: delivery.id,
    object: "webhook_delivery",
    endpoint_id: delivery.endpointId,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    status: delivery.status,
    attempt_count: delivery.attemptCount,
    next_attempt_at: isoTime(delivery.nextAttemptAt),
    last_attempt: delivery.lastAttempt ? deliveryAttemptJson(delivery.lastAttempt) : null,
    attempts: delivery.attempts.map(deliveryAttemptJson),
    created_at: requiredIsoTime(delivery.createdAt),
    updated_at: requiredIsoTime(delivery.updatedAt),
  };
}

export function deliveryAttemptJson(attempt: WebhookDeliveryAttempt): Record<string, unknown> {
  const { request, response } = attempt;
  return {
    attempted_at: requiredIsoTime(attempt.attemptedAt),
    response_status: orNull(attempt.responseStatus),
    error: orNull(attempt.error),
    duration_ms: attempt.durationMs,
    request: request ? { url: request.url, headers: { ...request.headers }, body: request.body, body_truncated: request.bodyTruncated } : null,
    response: response ? { headers: { ...response.headers }, body: response.body, body_truncated: response.bodyTruncated } : null,
  };
}

export function webhookTestJson(test: WebhookTest): Record<string, unknown> {
  return {
    object: "webhook_test",
    endpoint_id: test.endpointId,
    event_id: test.eventId,
    status: test.status,
    response_status: orNull(test.responseStatus),
    duration_ms: test.durationMs,
    error: orNull(test.error),
    timings: {
      dns_ms: orNull(test.timings?.dnsMs),
      connect_ms: orNull(test.timings?.connectMs),
      tls_ms: orNull(test.timings?.tlsMs),
      first_byte_ms: orNull(test.timings?.firstByteMs),
    },
    error_detail: orNull(test.errorDetail),
  };
}

export function webhookRecoveryJson(recovery: WebhookRecovery): Record<string, unknown> {
  return {
    object: "webhook_recovery",
    endpoint_id: recovery.endpointId,
    since: requiredIsoTime(recovery.since),
    until: requiredIsoTime(recovery.until),
    deliveries_queued: recovery.deliveriesQueued,
  };
}

export function deletedWebhookEndpointJson(id: string): Record<string, unknown> {
  return { id, object: "webhook_endpoint", deleted: true };
}
