// Runs one attempt of one delivery, with the delivery record as the source of truth: claim the attempt (a
// conditional update, so no two workers send the same attempt), send it, record the outcome (a failure's
// retry time is written in that same conditional update: the record is the only schedule of its attempts),
// and keep the endpoint's count of consecutive failures (atomic $inc).
import type { Clock } from "../domain/clock.ts";
import type { EventDocument, EventRepository } from "../store/event-repository.ts";
import type { AttemptOutcome, WebhookDeliveryDocument, WebhookDeliveryRepository } from "../store/webhook-delivery-repository.ts";
import type { WebhookEndpointDocument, WebhookEndpointRepository } from "../store/webhook-endpoint-repository.ts";
import type { AttemptResult } from "./delivery-client.ts";
import { CONSECUTIVE_FAILURES_TO_DISABLE, LEASE_MARGIN_MS, MAX_DELIVERY_ATTEMPTS } from "./delivery-policy.ts";
import { settleDeliveriesOfDisabledEndpoint } from "./endpoint-disabling.ts";
import { sendSignedEvent, type SendSettings } from "./signed-request.ts";
import type { SuccessRecorder } from "./success-recorder.ts";

/**
 * What fan-out already holds, saving the worker its reads and its claim: the event, the endpoint, and the
 * delivery record as inserted, its first attempt already claimed and leased to this process.
 */
export interface AttemptHints {
  event: EventDocument;
  endpoint: WebhookEndpointDocument;
  claimed: WebhookDeliveryDocument;
}

/** Sends one attempt: signs and posts the event (tests inject a fake). Network outcomes are answered, not thrown. */
export type AttemptSender = (endpoint: WebhookEndpointDocument, event: EventDocument, attempt: number) => Promise<AttemptResult>;

export interface DeliveryWorkerDependencies {
  deliveries: WebhookDeliveryRepository;
  endpoints: WebhookEndpointRepository;
  events: EventRepository;
  clock: Clock;
  send: SendSettings;
  /** By default `sendSignedEvent` with `send`. */
  sender?: AttemptSender;
  /**
   * Hears of each retry time this worker wrote, once written, so that the process can wake up for it; the
   * record stays the schedule (any process's poll finds the retry too).
   */
  onRetryRecorded?: (deliveryId: string, at: Date) => void;
  /** Delays after failed attempts 1..6. */
  retryScheduleMs: readonly number[];
  successes: SuccessRecorder;
  /** Hears of every attempt's outcome (metrics): its error code, null on success. */
  onAttempt?: (error: string | null) => void;
}

export class DeliveryWorker {
  private readonly sender: AttemptSender;

  constructor(private readonly deps: DeliveryWorkerDependencies) {
    this.sender = deps.sender ?? ((endpoint, event, attempt) => sendSignedEvent(endpoint, event, attempt, deps.send));
  }

  /** Runs the next attempt of the delivery if it is due and nobody holds it; otherwise does nothing. */
  async attempt(deliveryId: string, hints?: AttemptHints): Promise<void> {
    const { deliveries, endpoints, events, clock, send } = this.deps;
    const claimedAt = clock();
    const leaseUntil = new Date(claimedAt.getTime() + send.timeoutMs + LEASE_MARGIN_MS);
    const delivery = hints
      ? await this.keepClaim(hints.claimed, claimedAt, leaseUntil)
      : await deliveries.claimAttempt(deliveryId, claimedAt, leaseUntil, MAX_DELIVERY_ATTEMPTS);
    if (!delivery) return;
    const endpoint = hints?.endpoint ?? (await endpoints.findById(delivery.endpoint_id));
    if (!endpoint) return; // deleted, together with its deliveries
    if (!endpoint.enabled) {
      await settleDeliveriesOfDisabledEndpoint(deliveries, endpoint._id, claimedAt, { deliveryId: delivery._id, attempt: delivery.attempt_count });
      return;
    }
    const event = hints?.event ?? (await events.findById(delivery.event_id));
    let result: AttemptResult;
    try {
      if (!event) throw new Error(`event ${delivery.event_id} of delivery ${delivery._id} is gone`);
      result = await this.sender(endpoint, event, delivery.attempt_count);
    } catch (error) {
      // Our failure, not the receiver's: recorded as internal_error, retried, and not held against the endpoint.
      const durationMs = clock().getTime() - claimedAt.getTime();
      await this.record(delivery, claimedAt, { responseStatus: null, error: null, durationMs }, "internal_error");
      throw error;
    }
    if (result.error !== null && send.signal?.aborted) {
      // Cut short because this process is stopping (WebhookDelivery.stop): our failure, not the receiver's, so
      // recorded as internal_error, retried on schedule like any other, and not held against the endpoint.
      await this.record(delivery, claimedAt, result, "internal_error");
      return;
    }
    await this.record(delivery, claimedAt, result, result.error);
    await this.countOutcome(endpoint, result.error === null);
  }

  /** A claim made at insertion holds if enough of its lease is left for a whole attempt; else it is renewed. */
  private async keepClaim(claimed: WebhookDeliveryDocument, now: Date, leaseUntil: Date): Promise<WebhookDeliveryDocument | null> {
    const heldUntil = claimed.lease_until!;
    if (heldUntil.getTime() - now.getTime() >= this.deps.send.timeoutMs + LEASE_MARGIN_MS / 2) return claimed;
    return this.deps.deliveries.renewLease(claimed._id, claimed.attempt_count, heldUntil, leaseUntil);
  }

  private async record(delivery: WebhookDeliveryDocument, attemptedAt: Date, result: AttemptResult, error: string | null): Promise<void> {
    const attempt = delivery.attempt_count;
    const now = this.deps.clock();
    let outcome: AttemptOutcome["status"] = "pending";
    let nextAttemptAt: Date | null = null;
    if (error === null) outcome = "succeeded";
    else if (attempt >= MAX_DELIVERY_ATTEMPTS) outcome = "failed";
    else nextAttemptAt = new Date(now.getTime() + this.deps.retryScheduleMs[attempt - 1]!);
    const written: AttemptOutcome = {
      status: outcome,
      next_attempt_at: nextAttemptAt,
      last_attempt: { attempted_at: attemptedAt, response_status: result.responseStatus, error, duration_ms: result.durationMs },
    };
    if (outcome === "succeeded") {
      await this.deps.successes.record(delivery._id, attempt, written, now);
    } else {
      // Outcome and retry time in one conditional update: written only if the delivery is still at this attempt.
      const recorded = await this.deps.deliveries.recordAttempt(delivery._id, attempt, written, now);
      if (recorded && nextAttemptAt !== null) this.deps.onRetryRecorded?.(delivery._id, nextAttemptAt);
    }
    // Heard once the outcome is written, so what listeners count agrees with the delivery records.
    this.deps.onAttempt?.(error);
  }

  /** Any success ends a run of failures; the 20th failure in a row disables the endpoint. */
  private async countOutcome(endpoint: WebhookEndpointDocument, succeeded: boolean): Promise<void> {
    const { endpoints, deliveries, clock } = this.deps;
    if (succeeded) {
      // The endpoint was read just now; with no failures on record there is nothing to reset.
      if (endpoint.consecutive_failures > 0) await endpoints.recordSuccess(endpoint._id);
      return;
    }
    const counted = await endpoints.recordFailure(endpoint._id);
    if (!counted || !counted.enabled || counted.consecutive_failures < CONSECUTIVE_FAILURES_TO_DISABLE) return;
    const now = clock();
    if (await endpoints.disableForFailures(endpoint._id, now)) await settleDeliveriesOfDisabledEndpoint(deliveries, endpoint._id, now);
  }
}
