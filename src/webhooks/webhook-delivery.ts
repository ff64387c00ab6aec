// Webhook delivery in one process. Every delivery has one Agenda job (`webhook-attempt`, unique by the delivery
// id) whose `nextRunAt` is the one schedule of its next attempt, and whose lock is the attempt's lease: retries,
// replays, recoveries and first attempts nobody sent at once are runs of that job, moved along by the dates its
// runs answer (DeliveryWorker). The one fast path is fan-out's: the process that relays a fresh event sends the
// first attempts at once, while each delivery's job waits one lease later as the guarantee that the attempt is
// made even if this process dies; recording the attempt's outcome moves that job to the retry time or removes it.
import type { Clock } from "../domain/clock.ts";
import type { JobQueue, ScheduledJob } from "../jobs/job-queue.ts";
import { TurnBatch } from "../lib/turn-batch.ts";
import type { EventRepository } from "../store/event-repository.ts";
import type { WebhookDeliveryRepository } from "../store/webhook-delivery-repository.ts";
import type { WebhookEndpointRepository } from "../store/webhook-endpoint-repository.ts";
import { DeliveryDispatcher } from "./delivery-dispatcher.ts";
import { DEFAULT_RECOVERY_RATE_PER_SECOND, LEASE_MARGIN_MS } from "./delivery-policy.ts";
import { DeliveryRecovery } from "./delivery-recovery.ts";
import { DeliveryWorker, type AttemptHints, type AttemptSender, type NextRun } from "./delivery-worker.ts";
import type { SendSettings } from "./signed-request.ts";
import { FailureRecorder } from "./failure-recorder.ts";
import { SuccessRecorder } from "./success-recorder.ts";
import { WebhookFanout } from "./webhook-fanout.ts";

/** The job of a delivery: its data names the delivery, one job per delivery. */
export const DELIVERY_JOB = "webhook-attempt";

export interface DeliveryJobData {
  deliveryId: string;
}

/** What the webhooks module needs of the job queue (JobQueue; tests may pass the same). */
export type DeliveryJobs = Pick<JobQueue, "define" | "scheduleMany" | "moveMany" | "ensureUniqueIndex">;

export interface WebhookDeliveryOptions {
  send: SendSettings;
  retryScheduleMs: readonly number[];
  maxPendingPerEndpoint: number;
  /** Attempts in flight at once in this process (fan-out's first attempts; and job runs). */
  concurrency: number;
  /**
   * false in a process that does not deliver (SVC_ROLE=api): fan-out records deliveries unclaimed, with their
   * jobs due at once, and workers run them. true: this process sends the first attempts of what it relays.
   */
  deliversInProcess: boolean;
  /** First attempts of recovered deliveries per second per endpoint; default DEFAULT_RECOVERY_RATE_PER_SECOND. */
  recoveryRatePerSecond?: number;
}

export interface WebhookDeliveryDependencies {
  deliveries: WebhookDeliveryRepository;
  endpoints: WebhookEndpointRepository;
  events: EventRepository;
  jobs: DeliveryJobs;
  clock: Clock;
  onError: (error: unknown) => void;
  /** Hears of every delivery attempt's outcome: its error code, null on success. */
  onAttempt?: (error: string | null) => void;
  /** Sends attempts; by default signed HTTP requests (tests inject a fake). */
  sender?: AttemptSender;
}

interface FirstAttempt {
  hints: AttemptHints;
  /** Settles once the delivery's guarantee job is written: only then may the outcome move or remove it. */
  guarantee: Promise<void>;
}

export class WebhookDelivery {
  readonly fanout: WebhookFanout;
  readonly recovery: DeliveryRecovery;
  private readonly worker: DeliveryWorker;
  private readonly firstAttempts: DeliveryDispatcher<FirstAttempt>;
  private readonly jobMoves: TurnBatch<{ value: string; at: Date | null }>;
  /** Job runs in flight in this process. */
  private running = 0;
  private idle: (() => void)[] = [];
  private stopping = false;
  /** Aborted when stopping has waited long enough: the attempts still in flight end at once. */
  private readonly cutShort = new AbortController();

  constructor(
    private readonly deps: WebhookDeliveryDependencies,
    options: WebhookDeliveryOptions,
  ) {
    const leaseMs = options.send.timeoutMs + LEASE_MARGIN_MS;
    this.worker = new DeliveryWorker({
      ...deps,
      send: { ...options.send, signal: this.cutShort.signal },
      retryScheduleMs: options.retryScheduleMs,
      leaseMs,
      successes: new SuccessRecorder(deps.deliveries, deps.endpoints),
      failures: new FailureRecorder(deps.deliveries, deps.endpoints),
    });
    this.jobMoves = new TurnBatch<{ value: string; at: Date | null }>(async (moves) => {
      await deps.jobs.moveMany(DELIVERY_JOB, "deliveryId", moves);
      return moves.map(() => undefined);
    });
    this.firstAttempts = new DeliveryDispatcher<FirstAttempt>(
      async (_id, first) => {
        const next = await this.worker.runFirst(first!.hints);
        await first!.guarantee;
        await this.jobMoves.add({ value: first!.hints.claimed._id, at: next });
      },
      options.concurrency,
      deps.onError,
    );
    // Room for a first attempt to wait its turn in this process as long again as it may run.
    const firstLeaseMs = options.send.timeoutMs + leaseMs;
    this.fanout = new WebhookFanout({
      endpoints: deps.endpoints,
      deliveries: deps.deliveries,
      clock: deps.clock,
      maxPendingPerEndpoint: options.maxPendingPerEndpoint,
      leaseMs: firstLeaseMs,
      schedule: (jobs, scheduling) => this.schedule(jobs, scheduling),
      ...(options.deliversInProcess
        ? { dispatch: (hints: AttemptHints, guarantee: Promise<void>) => this.firstAttempts.submit(hints.claimed._id, { hints, guarantee }) }
        : {}),
    });
    this.recovery = new DeliveryRecovery(
      { deliveries: deps.deliveries, endpoints: deps.endpoints, clock: deps.clock, schedule: (jobs) => this.schedule(jobs) },
      {
        ratePerSecond: options.recoveryRatePerSecond ?? DEFAULT_RECOVERY_RATE_PER_SECOND,
        maxPendingPerEndpoint: options.maxPendingPerEndpoint,
      },
    );
    deps.jobs.define<DeliveryJobData>(DELIVERY_JOB, (data) => this.runJob(data.deliveryId), {
      concurrency: options.concurrency,
      lockLifetimeMs: leaseMs,
    });
  }

  /** Creates the index that keeps one job per delivery. */
  ensureIndexes(): Promise<void> {
    return this.deps.jobs.ensureUniqueIndex(DELIVERY_JOB, "deliveryId");
  }

  /**
   * Gives every pending delivery without a job its job, due at its recorded next attempt (now if it has none):
   * deliveries a version that kept no jobs left pending, or whose job was lost with its database write. Existing
   * jobs keep their time; run at start, so nothing pending is left without the schedule that runs it.
   */
  async adoptPending(): Promise<number> {
    let adopted = 0;
    for await (const batch of this.deps.deliveries.pendingSchedules(500)) {
      const now = this.deps.clock();
      await this.schedule(
        batch.map((d) => ({ data: { deliveryId: d._id }, at: d.next_attempt_at ?? now })),
        { keepExisting: true },
      );
      adopted += batch.length;
    }
    return adopted;
  }

  /** Runs the next attempt of a delivery now, in whichever process takes its job (a replay's first attempt). */
  dispatch(deliveryId: string): Promise<void> {
    return this.schedule([{ data: { deliveryId }, at: this.deps.clock() }]);
  }

  /**
   * Stops sending and waits for the attempts in flight, at most `graceMs`: an attempt still running then is cut
   * short and recorded as failed with `internal_error`, so it is retried on schedule (its job moved to the retry
   * time, for any process) and not held against its endpoint. The job queue's own stop ends taking jobs.
   */
  async stop(graceMs = Number.POSITIVE_INFINITY): Promise<void> {
    this.stopping = true;
    const timer = Number.isFinite(graceMs) ? setTimeout(() => this.cutShort.abort(), graceMs) : null;
    try {
      await this.firstAttempts.stop();
      if (this.running > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
    } finally {
      if (timer !== null) clearTimeout(timer);
    }
  }

  /** Resolves once no first attempt and no job run is in flight in this process (tests). */
  async whenIdle(): Promise<void> {
    await this.firstAttempts.whenIdle();
    if (this.running > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private schedule(jobs: readonly ScheduledJob<DeliveryJobData>[], options: { keepExisting?: boolean } = {}): Promise<void> {
    return this.deps.jobs.scheduleMany(DELIVERY_JOB, jobs, "deliveryId", options);
  }

  /** One run of a delivery's job, as Agenda starts it: answers its next run (undefined: the job ends). */
  async runJob(deliveryId: string): Promise<Date | undefined> {
    // Taken while stopping: left for another process, due now.
    if (this.stopping) return this.deps.clock();
    this.running += 1;
    try {
      const next: NextRun = await this.worker.runJob(deliveryId);
      return next ?? undefined;
    } finally {
      this.running -= 1;
      if (this.running === 0) for (const resolve of this.idle.splice(0)) resolve();
    }
  }
}
