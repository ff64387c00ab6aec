// Webhook delivery in one process. A delivery's next attempt is one Agenda job (`webhook-attempt`, unique by the
// delivery id) whose `nextRunAt` is the one schedule of that attempt, and whose lock is the attempt's lease: retries,
// replays, recoveries and first attempts nobody sent at once are runs of that job, moved along by the dates its
// runs answer (DeliveryWorker). The one fast path is fan-out's: the process that relays fresh events sends their
// first attempts at once, their records written with their outcomes (HeldRecords), while one job for the batch
// (`webhook-first-attempts`) waits one lease later as the guarantee that they are made and recorded even if this
// process dies; a first attempt that fails gets its delivery's job at the retry time, and once every first attempt
// of the batch is recorded the batch's job is removed.
import type { Clock } from "../domain/clock.ts";
import type { JobQueue, ScheduledJob } from "../jobs/job-queue.ts";
import { TurnBatch } from "../lib/turn-batch.ts";
import type { EventRepository } from "../store/event-repository.ts";
import type { WebhookDeliveryRepository } from "../store/webhook-delivery-repository.ts";
import type { WebhookEndpointRepository } from "../store/webhook-endpoint-repository.ts";
import { AttemptConnections } from "./attempt-connections.ts";
import { DeliveryDispatcher } from "./delivery-dispatcher.ts";
import { DEFAULT_RECOVERY_RATE_PER_SECOND, LEASE_MARGIN_MS } from "./delivery-policy.ts";
import { DeliveryRecovery } from "./delivery-recovery.ts";
import { FIRST_ATTEMPTS_JOB, type FirstAttemptBatch, FirstAttemptGuarantees, type FirstAttemptsJobData } from "./first-attempt-guarantees.ts";
import { type DeliveryJobData, type DeliveryPlace, jobDataOf, placeIn } from "./delivery-job.ts";
import { DeliveryWorker, type AttemptHints, type AttemptSender, type NextRun } from "./delivery-worker.ts";
import type { SendSettings } from "./signed-request.ts";
import { FailureRecorder } from "./failure-recorder.ts";
import { HeldRecords } from "./held-records.ts";
import { InFlightAttempts } from "./in-flight-attempts.ts";
import { SuccessRecorder } from "./success-recorder.ts";
import { WebhookFanout } from "./webhook-fanout.ts";

/**
 * How long a relay waits at most for this process's first attempts to catch up before it goes on (a fan-out
 * resolves once no more attempts wait than run): under a burst, events are relayed about as fast as they are
 * delivered, and their records, written with their outcomes, wait in memory for a fraction of a second.
 */
const RELAY_WAITS_FOR_ROOM_MS = 250;

/** The job of a delivery: its data names the delivery, one job per delivery. */
export const DELIVERY_JOB = "webhook-attempt";

/**
 * The second removal of a deleted endpoint's deliveries, one lease after the first: a first attempt in flight then
 * (its record held by fan-out, in any process) writes its record within that time, and this removes it.
 */
export const DELETED_ENDPOINT_JOB = "webhook-deleted-endpoint";

export type { DeliveryJobData };

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
  /** How long a first attempt's record may wait for its outcome before it is written pending (HeldRecords). */
  heldRecordsVisibleWithinMs?: number;
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
  /** The fan-out batch it belongs to, whose job stands behind it until its outcome is recorded. */
  batch: FirstAttemptBatch;
}

export class WebhookDelivery {
  readonly fanout: WebhookFanout;
  readonly recovery: DeliveryRecovery;
  private readonly worker: DeliveryWorker;
  private readonly firstAttempts: DeliveryDispatcher<FirstAttempt>;
  private readonly guarantees: FirstAttemptGuarantees;
  /** The jobs of first attempts that failed, at their retry times: the writes of one turn in one command. */
  private readonly retryJobs: TurnBatch<ScheduledJob<DeliveryJobData>>;
  /** Job runs in flight in this process. */
  private running = 0;
  private idle: (() => void)[] = [];
  private stopping = false;
  /** Cut short when stopping has waited long enough: the attempts still in flight end at once. */
  private readonly inFlight = new InFlightAttempts();
  /** The connections attempts keep open to their receivers' vetted addresses. */
  private readonly connections = new AttemptConnections();
  /** Fan-out's records of first attempts, written with their outcomes. */
  private readonly held: HeldRecords;
  /** An attempt's lease: its time-out and a margin (a delivery job's lock lifetime). */
  private readonly leaseMs: number;

  constructor(
    private readonly deps: WebhookDeliveryDependencies,
    options: WebhookDeliveryOptions,
  ) {
    const leaseMs = options.send.timeoutMs + LEASE_MARGIN_MS;
    this.leaseMs = leaseMs;
    this.held = new HeldRecords(deps.deliveries, deps.onError, options.heldRecordsVisibleWithinMs);
    this.worker = new DeliveryWorker({
      ...deps,
      send: { ...options.send, inFlight: this.inFlight, connections: this.connections },
      retryScheduleMs: options.retryScheduleMs,
      leaseMs,
      successes: new SuccessRecorder(deps.deliveries, deps.endpoints),
      failures: new FailureRecorder(deps.deliveries, deps.endpoints),
      held: this.held,
    });
    this.retryJobs = new TurnBatch<ScheduledJob<DeliveryJobData>>(async (jobs) => {
      // Added, not moved: a job of the delivery exists only if the batch's guarantee ran meanwhile, and then stands.
      await this.schedule(jobs, { keepExisting: true });
      return jobs.map(() => undefined);
    });
    this.guarantees = new FirstAttemptGuarantees({
      jobs: deps.jobs,
      recover: async (eventIds) => this.fanout.recover(await deps.events.findManyById(eventIds)),
    });
    this.firstAttempts = new DeliveryDispatcher<FirstAttempt>(
      async (_deliveryId, first) => {
        let recorded = false;
        try {
          const next = await this.worker.runFirst(first!.hints);
          if (next !== null) await this.retryJobs.add({ data: jobDataOf(first!.hints.claimed), at: next });
          recorded = true;
        } finally {
          await this.guarantees.done(first!.batch, recorded);
        }
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
      holds: (eventId) => this.held.holds(eventId),
      schedule: (jobs, scheduling) => this.schedule(jobs, scheduling),
      ...(options.deliversInProcess ? { dispatch: (firsts: readonly AttemptHints[], leaseEnd: Date) => this.dispatchFirsts(firsts, leaseEnd) } : {}),
    });
    this.recovery = new DeliveryRecovery(
      { deliveries: deps.deliveries, endpoints: deps.endpoints, clock: deps.clock, schedule: (jobs) => this.schedule(jobs) },
      {
        ratePerSecond: options.recoveryRatePerSecond ?? DEFAULT_RECOVERY_RATE_PER_SECOND,
        maxPendingPerEndpoint: options.maxPendingPerEndpoint,
      },
    );
    // A run spends most of its time in round trips (claim, reads, outcome, the job's end), and its place is taken
    // by the next job only once that one is locked: with the lock limit at the concurrency, a storm's retries ran
    // in waves of `concurrency` with the lock batch's round trips between them. Twice as many locked, in batches of
    // a quarter of that, keeps the next runs waiting locked while these run.
    deps.jobs.define<DeliveryJobData>(DELIVERY_JOB, (data) => this.runJob(data.deliveryId, placeIn(data)), {
      concurrency: options.concurrency,
      lockLimit: 2 * options.concurrency,
      lockBatch: Math.max(1, Math.floor(options.concurrency / 2)),
      lockLifetimeMs: leaseMs,
    });
    deps.jobs.define<FirstAttemptsJobData>(FIRST_ATTEMPTS_JOB, (data) => this.guarantees.run(data));
    deps.jobs.define<{ endpointId: string }>(DELETED_ENDPOINT_JOB, async (data) => {
      await deps.deliveries.deleteForEndpoint(data.endpointId);
    });
  }

  /**
   * Removes the deliveries of an endpoint just deleted, now and once more one lease later (a job): records held by
   * first attempts in flight are written meanwhile. The endpoint is gone first, so no fan-out adds any after.
   */
  async removeDeliveriesOf(endpointId: string): Promise<void> {
    await this.deps.deliveries.deleteForEndpoint(endpointId);
    const at = new Date(this.deps.clock().getTime() + this.leaseMs);
    await this.deps.jobs.scheduleMany(DELETED_ENDPOINT_JOB, [{ data: { endpointId }, at }], "endpointId", { keepExisting: true });
  }

  /** Creates the indexes that keep one job per delivery, one per batch of first attempts and one per deleted endpoint. */
  async ensureIndexes(): Promise<void> {
    await this.deps.jobs.ensureUniqueIndex(DELIVERY_JOB, "deliveryId");
    await this.deps.jobs.ensureUniqueIndex(FIRST_ATTEMPTS_JOB, "batchId");
    await this.deps.jobs.ensureUniqueIndex(DELETED_ENDPOINT_JOB, "endpointId");
  }

  /** Starts fan-out's first attempts behind their batch's job; resolves once that job is written. */
  private dispatchFirsts(firsts: readonly AttemptHints[], leaseEnd: Date): Promise<void> {
    const batch = this.guarantees.write(
      firsts.map((f) => f.event._id),
      firsts.length,
      leaseEnd,
    );
    this.held.hold(firsts.map((hints) => hints.claimed));
    for (const hints of firsts) this.firstAttempts.submit(hints.claimed._id, { hints, batch });
    return Promise.all([batch.written, this.firstAttempts.room(RELAY_WAITS_FOR_ROOM_MS)]).then(() => undefined);
  }

  /** A run of a batch's guarantee job, as Agenda starts it (tests run it by hand). */
  runFirstAttemptsGuarantee(data: FirstAttemptsJobData): Promise<void> {
    return this.guarantees.run(data);
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
    const timer = Number.isFinite(graceMs) ? setTimeout(() => this.inFlight.cutShort(), graceMs) : null;
    try {
      await this.firstAttempts.stop();
      // Records of first attempts that never started stay unwritten: their batches' jobs record them.
      this.held.stop();
      if (this.running > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
    } finally {
      if (timer !== null) clearTimeout(timer);
      this.connections.closeIdle();
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
  async runJob(deliveryId: string, where?: DeliveryPlace): Promise<Date | undefined> {
    // Taken while stopping: left for another process, due now.
    if (this.stopping) return this.deps.clock();
    this.running += 1;
    try {
      const next: NextRun = await this.worker.runJob(deliveryId, where);
      return next ?? undefined;
    } finally {
      this.running -= 1;
      if (this.running === 0) for (const resolve of this.idle.splice(0)) resolve();
    }
  }
}
