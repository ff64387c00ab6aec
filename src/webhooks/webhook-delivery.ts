// Webhook delivery in one process: fan-out creates delivery records and hands them to the in-process
// dispatcher (first attempts start at once); retries are durable Agenda jobs, one per pending retry; a backstop
// poll finds whatever a crash or another process left due.
//
// Why first attempts bypass Agenda: an Agenda job costs a job insert plus a locking findOneAndUpdate and a
// completion write per run, on top of the delivery record's own claim and outcome writes; measured in
// bench/webhook-delivery.bench.ts, that path alone falls short of 1,000 deliveries/s. The delivery record is
// already durable and claimable, so the first attempt runs straight from it; Agenda keeps the schedule of
// retries, and the backstop covers crashes.
import type { Clock } from "../domain/clock.ts";
import type { JobQueue } from "../jobs/job-queue.ts";
import type { EventRepository } from "../store/event-repository.ts";
import type { WebhookDeliveryRepository } from "../store/webhook-delivery-repository.ts";
import type { WebhookEndpointRepository } from "../store/webhook-endpoint-repository.ts";
import { DeliveryBackstop } from "./delivery-backstop.ts";
import { DeliveryDispatcher } from "./delivery-dispatcher.ts";
import { DELIVERY_JOB, LEASE_MARGIN_MS, type DeliveryJobData } from "./delivery-policy.ts";
import { DeliveryWorker, type AttemptHints } from "./delivery-worker.ts";
import type { SendSettings } from "./signed-request.ts";
import { SuccessRecorder } from "./success-recorder.ts";
import { WebhookFanout } from "./webhook-fanout.ts";

export interface WebhookDeliveryOptions {
  send: SendSettings;
  retryScheduleMs: readonly number[];
  maxPendingPerEndpoint: number;
  /** Attempts in flight at once in this process. */
  concurrency: number;
  backstopIntervalMs: number;
  backstopStaleAfterMs: number;
  /**
   * false in a process that does not deliver (SVC_ROLE=api): fan-out records deliveries unclaimed and
   * workers take them. true: this process attempts what it records, and takes over what others left.
   */
  deliversInProcess: boolean;
  /** Whether the database reports changes (a replica set): workers then hear of new deliveries at once. */
  changeStreams: boolean;
}

export interface WebhookDeliveryDependencies {
  deliveries: WebhookDeliveryRepository;
  endpoints: WebhookEndpointRepository;
  events: EventRepository;
  jobs: JobQueue;
  clock: Clock;
  onError: (error: unknown) => void;
  /** Hears of every delivery attempt's outcome: its error code, null on success. */
  onAttempt?: (error: string | null) => void;
}

export class WebhookDelivery {
  readonly fanout: WebhookFanout;
  private readonly dispatcher: DeliveryDispatcher<AttemptHints>;
  private readonly backstop: DeliveryBackstop;
  private stopWatching: (() => Promise<void>) | null = null;

  constructor(
    private readonly deps: WebhookDeliveryDependencies,
    private readonly options: WebhookDeliveryOptions,
  ) {
    const worker = new DeliveryWorker({
      ...deps,
      send: options.send,
      retryScheduleMs: options.retryScheduleMs,
      successes: new SuccessRecorder(deps.deliveries),
    });
    this.dispatcher = new DeliveryDispatcher((id, hints) => worker.attempt(id, hints), options.concurrency, deps.onError);
    deps.jobs.define<DeliveryJobData>(DELIVERY_JOB, (job) => worker.attempt(job.delivery_id));
    this.fanout = new WebhookFanout({
      endpoints: deps.endpoints,
      deliveries: deps.deliveries,
      clock: deps.clock,
      maxPendingPerEndpoint: options.maxPendingPerEndpoint,
      // Room for the attempt to wait its turn in the dispatcher as long again as it may run.
      leaseMs: 2 * options.send.timeoutMs + LEASE_MARGIN_MS,
      ...(options.deliversInProcess ? { dispatch: (id: string, hints: AttemptHints) => this.dispatcher.submit(id, hints) } : {}),
    });
    this.backstop = new DeliveryBackstop(
      deps.deliveries,
      (id) => this.dispatcher.submit(id),
      deps.clock,
      { intervalMs: options.backstopIntervalMs, staleAfterMs: options.backstopStaleAfterMs, batchSize: options.concurrency },
      deps.onError,
    );
  }

  /** Runs the next attempt of a delivery now (a replay's first attempt); in an API process, a worker will. */
  dispatch(deliveryId: string): void {
    if (this.options.deliversInProcess) this.dispatcher.submit(deliveryId);
  }

  /** Starts taking due deliveries: by change stream when the database has them, always by polling too. */
  start(): void {
    if (!this.options.deliversInProcess) return;
    this.backstop.start();
    if (this.options.changeStreams && !this.stopWatching) {
      this.stopWatching = this.deps.deliveries.watchDue((id) => this.dispatcher.submit(id), this.deps.onError);
    }
  }

  /** Stops polling and waits for attempts in flight; queued ones stay pending for the next start or process. */
  async stop(): Promise<void> {
    await this.stopWatching?.();
    this.stopWatching = null;
    await this.backstop.stop();
    await this.dispatcher.stop();
  }
}
