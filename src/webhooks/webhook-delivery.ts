// Webhook delivery in one process: fan-out creates delivery records; each record is the only schedule of its
// attempts (`next_attempt_at`, written with the outcome of the attempt before); the DeliveryScheduler decides
// when this process runs them (fan-out's first attempts at once, its own retries by timer, the rest by change
// stream or poll), and the worker claims and sends each attempt.
//
// Why nothing goes through Agenda: a job costs an insert, a locking findOneAndUpdate and a completion write per
// run, on top of the delivery record's own claim and outcome writes; measured in
// bench/webhook-delivery.bench.ts, that path alone falls short of 1,000 deliveries/s. The record is already
// durable and claimable, and a second copy of the retry time would have to be kept in step with it.
import type { Clock } from "../domain/clock.ts";
import type { EventRepository } from "../store/event-repository.ts";
import type { WebhookDeliveryRepository } from "../store/webhook-delivery-repository.ts";
import type { WebhookEndpointRepository } from "../store/webhook-endpoint-repository.ts";
import { DEFAULT_RECOVERY_RATE_PER_SECOND, LEASE_MARGIN_MS } from "./delivery-policy.ts";
import { DeliveryRecovery } from "./delivery-recovery.ts";
import { DeliveryScheduler } from "./delivery-scheduler.ts";
import { DeliveryWorker, type AttemptHints, type AttemptSender } from "./delivery-worker.ts";
import type { SendSettings } from "./signed-request.ts";
import { SuccessRecorder } from "./success-recorder.ts";
import { WebhookFanout } from "./webhook-fanout.ts";

export interface WebhookDeliveryOptions {
  send: SendSettings;
  retryScheduleMs: readonly number[];
  maxPendingPerEndpoint: number;
  /** Attempts in flight at once in this process. */
  concurrency: number;
  /** How often this process polls for due deliveries that nobody holds. */
  pollIntervalMs: number;
  /** How long a due retry is left to the timer of the process that wrote it before polls take it (0: at once). */
  pollStaleAfterMs: number;
  /**
   * false in a process that does not deliver (SVC_ROLE=api): fan-out records deliveries unclaimed and
   * workers take them. true: this process attempts what it records, and takes over what others left.
   */
  deliversInProcess: boolean;
  /** Whether the database reports changes (a replica set): workers then hear of new deliveries at once. */
  changeStreams: boolean;
  /** First attempts of recovered deliveries per second per endpoint; default DEFAULT_RECOVERY_RATE_PER_SECOND. */
  recoveryRatePerSecond?: number;
}

export interface WebhookDeliveryDependencies {
  deliveries: WebhookDeliveryRepository;
  endpoints: WebhookEndpointRepository;
  events: EventRepository;
  clock: Clock;
  onError: (error: unknown) => void;
  /** Hears of every delivery attempt's outcome: its error code, null on success. */
  onAttempt?: (error: string | null) => void;
  /** Sends attempts; by default signed HTTP requests (tests inject a fake). */
  sender?: AttemptSender;
}

export class WebhookDelivery {
  readonly fanout: WebhookFanout;
  readonly scheduler: DeliveryScheduler;
  readonly recovery: DeliveryRecovery;
  /** Aborted when stopping has waited long enough: the attempts still in flight end at once. */
  private readonly cutShort = new AbortController();

  constructor(
    deps: WebhookDeliveryDependencies,
    private readonly options: WebhookDeliveryOptions,
  ) {
    const worker = new DeliveryWorker({
      ...deps,
      send: { ...options.send, signal: this.cutShort.signal },
      retryScheduleMs: options.retryScheduleMs,
      successes: new SuccessRecorder(deps.deliveries),
      onRetryRecorded: (id, at) => this.scheduler.wakeAt(id, at),
    });
    this.scheduler = new DeliveryScheduler(
      deps.deliveries,
      (id, hints) => worker.attempt(id, hints),
      deps.clock,
      {
        concurrency: options.concurrency,
        pollIntervalMs: options.pollIntervalMs,
        pollStaleAfterMs: options.pollStaleAfterMs,
        changeStreams: options.changeStreams,
      },
      deps.onError,
    );
    this.fanout = new WebhookFanout({
      endpoints: deps.endpoints,
      deliveries: deps.deliveries,
      clock: deps.clock,
      maxPendingPerEndpoint: options.maxPendingPerEndpoint,
      // Room for the attempt to wait its turn in the queue as long again as it may run.
      leaseMs: 2 * options.send.timeoutMs + LEASE_MARGIN_MS,
      ...(options.deliversInProcess ? { dispatch: (id: string, hints: AttemptHints) => this.scheduler.runClaimed(id, hints) } : {}),
    });
    this.recovery = new DeliveryRecovery(
      {
        deliveries: deps.deliveries,
        endpoints: deps.endpoints,
        clock: deps.clock,
        // In an API process, the workers' polls find recovered deliveries as they fall due.
        ...(options.deliversInProcess ? { runDue: (id: string) => this.scheduler.runDue(id) } : {}),
      },
      {
        ratePerSecond: options.recoveryRatePerSecond ?? DEFAULT_RECOVERY_RATE_PER_SECOND,
        maxPendingPerEndpoint: options.maxPendingPerEndpoint,
      },
    );
    this.scheduler.leaveToOthers((id) => this.recovery.drips(id));
  }

  /** Runs the next attempt of a delivery now (a replay's first attempt); in an API process, a worker will. */
  dispatch(deliveryId: string): void {
    if (this.options.deliversInProcess) this.scheduler.runDue(deliveryId);
  }

  /** Starts taking due deliveries: by change stream when the database has them, always by polling too. */
  start(): void {
    if (this.options.deliversInProcess) this.scheduler.start();
  }

  /**
   * Stops every source of attempts and waits for those in flight, at most `graceMs`: an attempt still running
   * then is cut short and recorded as failed with `internal_error`, so it is retried on schedule (by any process)
   * and not held against its endpoint. Nothing is lost: the rest stays due in the records.
   */
  async stop(graceMs = Number.POSITIVE_INFINITY): Promise<void> {
    this.recovery.stop();
    const timer = Number.isFinite(graceMs) ? setTimeout(() => this.cutShort.abort(), graceMs) : null;
    try {
      await this.scheduler.stop();
    } finally {
      if (timer !== null) clearTimeout(timer);
    }
  }
}
