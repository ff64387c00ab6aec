// Runs attempts of deliveries. A delivery's job (`webhook-attempt`, one per delivery, unique by its id) is its
// one schedule: each run of the job claims the next attempt from the record (a conditional update, so no two runs
// send the same attempt), sends it, and applies what `decideAfterAttempt` says follows: the record's history and
// status, the endpoint's count of consecutive failures and its disabling, and the job's next run (the date the
// run answers) or its end. The only other way in is fan-out's first attempt, sent at once by the process that
// relayed the event, whose job waits as its guarantee and is moved or removed once the outcome is recorded.
import type { Clock } from "../domain/clock.ts";
import type { EventDocument, EventRepository } from "../store/event-repository.ts";
import {
  type AttemptOutcome,
  type DeliveryAttemptRecord,
  type OutcomeWrite,
  type WebhookDeliveryDocument,
  type WebhookDeliveryRepository,
  legacyHistory,
  storedHeaders,
} from "../store/webhook-delivery-repository.ts";
import type { WebhookEndpointDocument, WebhookEndpointRepository } from "../store/webhook-endpoint-repository.ts";
import type { AttemptResult, ReceivedResponse, SentRequest } from "./delivery-client.ts";
import { decideAfterAttempt, type AttemptVerdict } from "./delivery-policy.ts";
import { settleDeliveriesOfDisabledEndpoint } from "./endpoint-disabling.ts";
import { TurnBatch, turnBatchedReads } from "../lib/turn-batch.ts";
import { sendSignedEvent, type SendSettings } from "./signed-request.ts";
import type { DeliveryPlace } from "./delivery-job.ts";
import type { FailureRecorder } from "./failure-recorder.ts";
import type { HeldRecords } from "./held-records.ts";
import type { SuccessRecorder } from "./success-recorder.ts";

/**
 * What fan-out already holds, saving the first attempt its reads and its claim: the event, the endpoint, and the
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
  /** Delays after failed attempts 1..6. */
  retryScheduleMs: readonly number[];
  /** How long a claimed attempt is leased: the job's lock lifetime (time-out plus margin). */
  leaseMs: number;
  successes: SuccessRecorder;
  failures: FailureRecorder;
  /** Fan-out's records of first attempts, not written until their outcomes. */
  held: HeldRecords;
  /** Hears of every attempt's outcome (metrics): its error code, null on success. */
  onAttempt?: (error: string | null) => void;
  /** Hears of our own failures (an attempt that could not be made), which are recorded as `internal_error`. */
  onError: (error: unknown) => void;
}

/** An attempt as recorded: the receiver's answer, or an error code (ours included: `internal_error`). */
interface AttemptRecord {
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
  request?: SentRequest;
  response?: ReceivedResponse;
}

/** A delivery's endpoint and event, being read. */
interface PlaceReads extends DeliveryPlace {
  endpoint: Promise<WebhookEndpointDocument | null>;
  event: Promise<EventDocument | null>;
}

/** A delivery's record as one claim of many answered it (null: not claimed), and when they were claimed. */
interface Claim {
  record: WebhookDeliveryDocument | null;
  claimedAt: Date;
}

/** What follows an attempt for its job: run again at this time, or end (null). */
export type NextRun = Date | null;

export class DeliveryWorker {
  private readonly sender: AttemptSender;
  /** The endpoint and the event of an attempt, read together with those of the other runs of the same turn. */
  private readonly endpointById: (id: string) => Promise<WebhookEndpointDocument | null>;
  private readonly eventById: (id: string) => Promise<EventDocument | null>;
  /**
   * The claims of the runs of one event-loop turn, made together (a storm's retries start by the hundred, and one
   * command each was most of what they cost): each answers its claimed record, or null, and when it was claimed.
   */
  private readonly claims: TurnBatch<string, Claim>;

  constructor(private readonly deps: DeliveryWorkerDependencies) {
    this.sender = deps.sender ?? ((endpoint, event, attempt) => sendSignedEvent(endpoint, event, attempt, deps.send));
    this.endpointById = turnBatchedReads((ids) => deps.endpoints.findManyById(ids));
    this.eventById = turnBatchedReads((ids) => deps.events.findManyById(ids));
    this.claims = new TurnBatch<string, Claim>(async (ids) => {
      const claimedAt = deps.clock();
      const claimed = await deps.deliveries.claimUnleasedAttempts(ids, claimedAt, this.leaseEnd(claimedAt));
      const byId = new Map(claimed.map((record) => [record._id, record]));
      return ids.map((id) => ({ record: byId.get(id) ?? null, claimedAt }));
    });
  }

  /**
   * One run of a delivery's job: settles an attempt a dead process left in flight, then claims, sends and
   * records the next one. Answers when the job runs next (null: the delivery is settled, gone or taken by
   * another run, and the job ends). A job that names its delivery's endpoint and event (`where`) has them read
   * along with the claim instead of after it: a round trip less in each run.
   */
  async runJob(deliveryId: string, where?: DeliveryPlace): Promise<NextRun> {
    const reads = where === undefined ? undefined : this.readPlace(where);
    // Most runs find the last outcome recorded (no lease): the next attempt is claimed without reading the record first.
    const { record, claimedAt } = await this.claims.add(deliveryId);
    if (record) return this.attemptClaimed(record, claimedAt, reads);
    return this.runAfterLease(deliveryId);
  }

  /** Reads an endpoint and an event ahead; a read nobody awaits in the end fails quietly. */
  private readPlace(where: DeliveryPlace): PlaceReads {
    const endpoint = this.endpointById(where.endpointId);
    const event = this.eventById(where.eventId);
    endpoint.catch(() => undefined);
    event.catch(() => undefined);
    return { ...where, endpoint, event };
  }

  /** A run that found the delivery leased, settled or gone: waits for a live lease, or counts a lost attempt first. */
  private async runAfterLease(deliveryId: string): Promise<NextRun> {
    const { deliveries, clock } = this.deps;
    let delivery = await deliveries.findById(deliveryId);
    if (delivery?.status !== "pending") return null;
    const now = clock();
    if (delivery.lease_until !== null) {
      // Held by a run that is still within its lease (a second copy of the job cannot exist; a stale wake-up):
      // look again when the lease ends.
      if (delivery.lease_until.getTime() > now.getTime()) return delivery.lease_until;
      // The process that claimed this attempt died before recording it: it counts, as our failure.
      const endpoint = await this.endpointById(delivery.endpoint_id);
      if (!endpoint) return null;
      const verdict = decideAfterAttempt({
        attempt: delivery.attempt_count,
        error: "internal_error",
        lost: true,
        consecutiveFailures: null,
        now,
        retryScheduleMs: this.deps.retryScheduleMs,
      });
      const lostResult: AttemptRecord = { responseStatus: null, error: "internal_error", durationMs: 0 };
      const next = await this.apply(delivery, endpoint, delivery.lease_until, lostResult, verdict);
      if (next === null || next.getTime() > clock().getTime()) return next;
      delivery = await deliveries.findById(deliveryId);
      if (delivery?.status !== "pending") return null;
    }
    const claimedAt = clock();
    const claimed = await deliveries.claimAttempt(deliveryId, delivery.attempt_count, claimedAt, this.leaseEnd(claimedAt));
    if (!claimed) return null;
    return this.attemptClaimed(claimed, claimedAt);
  }

  private leaseEnd(claimedAt: Date): Date {
    return new Date(claimedAt.getTime() + this.deps.leaseMs);
  }

  /** Sends an attempt a job run claimed, to its endpoint as it is now (read ahead in `reads`, when they are its). */
  private async attemptClaimed(claimed: WebhookDeliveryDocument, claimedAt: Date, reads?: PlaceReads): Promise<NextRun> {
    const [endpoint, event] = await Promise.all([
      reads?.endpointId === claimed.endpoint_id ? reads.endpoint : this.endpointById(claimed.endpoint_id),
      reads?.eventId === claimed.event_id ? reads.event : this.eventById(claimed.event_id),
    ]);
    if (!endpoint) return null; // deleted, together with its deliveries
    return this.attempt(claimed, endpoint, event ?? undefined, claimedAt);
  }

  /** Fan-out's first attempt, claimed by fan-out (its record held): sent now. Answers what follows for its guarantee job. */
  runFirst(hints: AttemptHints): Promise<NextRun> {
    return this.attempt(hints.claimed, hints.endpoint, hints.event, this.deps.clock(), true);
  }

  /** Sends a claimed attempt and applies what follows it. */
  private async attempt(
    delivery: WebhookDeliveryDocument,
    endpoint: WebhookEndpointDocument,
    known: EventDocument | undefined,
    claimedAt: Date,
    first = false,
  ): Promise<NextRun> {
    const { deliveries, clock, send } = this.deps;
    if (!endpoint.enabled) {
      await settleDeliveriesOfDisabledEndpoint(deliveries, endpoint._id, claimedAt, { deliveryId: delivery._id, attempt: delivery.attempt_count });
      return null;
    }
    const event = known ?? (await this.eventById(delivery.event_id));
    let result: AttemptRecord;
    let failure: unknown = null;
    try {
      if (!event) throw new Error(`event ${delivery.event_id} of delivery ${delivery._id} is gone`);
      result = await this.sender(endpoint, event, delivery.attempt_count);
    } catch (error) {
      failure = error;
      result = { responseStatus: null, error: "internal_error", durationMs: clock().getTime() - claimedAt.getTime() };
    }
    // Cut short because this process is stopping (WebhookDelivery.stop): our failure, not the receiver's.
    if (result.error !== null && send.inFlight?.isCutShort) result = { ...result, error: "internal_error" };
    const counted = result.error !== null && result.error !== "internal_error";
    const consecutiveFailures = counted ? await this.deps.failures.countFailure(endpoint._id) : null;
    const verdict = decideAfterAttempt({
      attempt: delivery.attempt_count,
      error: result.error,
      consecutiveFailures,
      now: clock(),
      retryScheduleMs: this.deps.retryScheduleMs,
    });
    const next = await this.apply(delivery, endpoint, claimedAt, result, verdict, first);
    if (failure !== null) this.deps.onError(failure);
    return next;
  }

  /** Writes a verdict: the attempt into the record, the endpoint's disabling; answers the job's next run. */
  private async apply(
    delivery: WebhookDeliveryDocument,
    endpoint: WebhookEndpointDocument,
    attemptedAt: Date,
    result: AttemptRecord,
    verdict: AttemptVerdict,
    first = false,
  ): Promise<NextRun> {
    const { deliveries, endpoints, clock } = this.deps;
    const now = clock();
    const next = verdict.delivery.status === "pending" ? verdict.delivery.nextAttemptAt : null;
    const attempt = attemptRecord(attemptedAt, result);
    const legacy = legacyHistory(delivery);
    const written: AttemptOutcome = {
      status: verdict.delivery.status,
      next_attempt_at: next,
      attempt,
      ...(legacy !== undefined ? { legacyHistory: legacy } : {}),
    };
    let held = first ? this.deps.held.release(delivery._id) : null;
    if (held instanceof Promise) held = await held;
    const write: OutcomeWrite = { id: delivery._id, attempt: delivery.attempt_count, outcome: written, now, ...(held ? { held } : {}) };
    let recorded = true;
    try {
      if (verdict.delivery.status === "succeeded") await this.deps.successes.record(write, endpoint._id);
      else recorded = await this.deps.failures.record(write);
    } finally {
      if (held) this.deps.held.written(held);
    }
    // Heard once the outcome is written, so what listeners count agrees with the delivery records.
    this.deps.onAttempt?.(result.error);
    if (verdict.disableEndpoint && (await endpoints.disableForFailures(endpoint._id, now))) {
      await settleDeliveriesOfDisabledEndpoint(deliveries, endpoint._id, now);
      return null;
    }
    if (recorded) return next;
    // Moved on meanwhile (settled by a disabling, replayed): a fresh cycle runs next, now; a settled one ends.
    const current = await deliveries.findById(delivery._id);
    return current?.status === "pending" ? clock() : null;
  }
}

/** An attempt as the delivery's history keeps it: its outcome, the request as sent and the answer. */
function attemptRecord(attemptedAt: Date, result: AttemptRecord): DeliveryAttemptRecord {
  const { request, response } = result;
  return {
    attempted_at: attemptedAt,
    response_status: result.responseStatus,
    error: result.error,
    duration_ms: result.durationMs,
    request: request
      ? { url: request.url, headers: storedHeaders(request.headers), body: request.body, body_truncated: request.bodyTruncated }
      : null,
    response: response ? { headers: storedHeaders(response.headers), body: response.body, body_truncated: response.bodyTruncated } : null,
  };
}
