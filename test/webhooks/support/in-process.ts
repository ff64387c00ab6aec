// Webhook delivery in process, without HTTP: the repositories over a fresh database, a clock the test moves,
// and a fake sender that records each attempt and answers what the test says.
import { createContextValues, type HandlerContext } from "@connectrpc/connect";
import { WebhookEndpointsService } from "../../../gen/svc/v1/webhook_endpoints_pb.ts";
import { principalKey } from "../../../src/access/principal.ts";
import { JobQueue } from "../../../src/jobs/job-queue.ts";
import { newEventId } from "../../../src/domain/ids.ts";
import { newUuid } from "../../../src/domain/random.ts";
import type { Database } from "../../../src/store/database.ts";
import { EventRepository, type EventDocument } from "../../../src/store/event-repository.ts";
import { WebhookDeliveryRepository, type WebhookDeliveryDocument } from "../../../src/store/webhook-delivery-repository.ts";
import { newWebhookEndpoint, WebhookEndpointRepository, type WebhookEndpointDocument } from "../../../src/store/webhook-endpoint-repository.ts";
import type { AttemptResult } from "../../../src/webhooks/delivery-client.ts";
import type { AttemptSender } from "../../../src/webhooks/delivery-worker.ts";
import { FIRST_ATTEMPTS_JOB, type FirstAttemptsJobData } from "../../../src/webhooks/first-attempt-guarantees.ts";
import { DELIVERY_JOB, WebhookDelivery, type WebhookDeliveryOptions } from "../../../src/webhooks/webhook-delivery.ts";
import { deliveryRecord } from "../../../src/webhooks/webhook-fanout.ts";
import { freshDatabase } from "../../support/database.ts";
import { testHandlerContext } from "../../support/handler-context.ts";

/** Delays after failed attempts 1..6: distinct, so a test can tell which one was applied. */
export const SCHEDULE_MS = [60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 86_400_000];

export const OK: AttemptResult = { responseStatus: 200, error: null, durationMs: 3 };
export const HTTP_500: AttemptResult = { responseStatus: 500, error: "http_500", durationMs: 3 };

export interface SentAttempt {
  endpointId: string;
  eventId: string;
  attempt: number;
}

export class ManualClock {
  /** Set: the clock reads the wall clock (for Agenda, which runs jobs by it). */
  realTime = false;
  constructor(public now = new Date("2030-01-01T00:00:00.000Z")) {}
  readonly read = (): Date => (this.realTime ? new Date() : new Date(this.now.getTime()));
  advance(ms: number): Date {
    this.now = new Date(this.now.getTime() + ms);
    return this.read();
  }
}

export class FakeSender {
  readonly sent: SentAttempt[] = [];
  answer: (attempt: SentAttempt) => AttemptResult = () => OK;
  /** Set: attempts wait for it before they are answered (held in flight). */
  gate: Promise<void> | null = null;
  readonly send: AttemptSender = async (endpoint, event, attempt) => {
    const sent = { endpointId: endpoint._id, eventId: event._id, attempt };
    this.sent.push(sent);
    if (this.gate) await this.gate;
    return this.answer(sent);
  };
  /** Holds the attempts sent from now on in flight (`gate`) until the function it answers is called. */
  hold(): () => void {
    let release = () => {};
    this.gate = new Promise<void>((resolve) => (release = resolve));
    return release;
  }
  attemptsOf(eventId: string): number[] {
    return this.sent.filter((s) => s.eventId === eventId).map((s) => s.attempt);
  }
}

export class DeliveryHarness {
  readonly clock = new ManualClock();
  readonly sender = new FakeSender();
  readonly projectId = newUuid();
  readonly deliveries: WebhookDeliveryRepository;
  readonly endpoints: WebhookEndpointRepository;
  readonly events: EventRepository;
  /** What the modules reported through onError: a test expects none unless it says otherwise. */
  readonly errors: unknown[] = [];
  private readonly modules: WebhookDelivery[] = [];
  /** The job queue of each process (module), not started unless a test starts it. */
  readonly queues = new Map<WebhookDelivery, JobQueue>();

  private constructor(readonly database: Database) {
    this.deliveries = new WebhookDeliveryRepository(database.db);
    this.endpoints = new WebhookEndpointRepository(database.db);
    this.events = new EventRepository(database.db);
  }

  static async start(): Promise<DeliveryHarness> {
    const harness = new DeliveryHarness(await freshDatabase("svc_delivery"));
    await Promise.all([harness.deliveries.ensureIndexes(), harness.endpoints.ensureIndexes(), harness.events.ensureIndexes()]);
    return harness;
  }

  /**
   * The webhooks module of one process on this database, with its own job queue, not started: no job runs
   * unless the test runs one (`runJob`) or starts the queue (`queues.get(module).start()`); the jobs its
   * deliveries get are written to the database with the manual clock's times.
   */
  async process(options: Partial<WebhookDeliveryOptions> = {}): Promise<WebhookDelivery> {
    const onError = (error: unknown) => this.errors.push(error);
    const jobs = new JobQueue(this.database.db, { pollIntervalMs: 50, lockLifetimeMs: 60_000, maxConcurrency: 32, changeStreams: false });
    const module = new WebhookDelivery(
      {
        deliveries: this.deliveries,
        endpoints: this.endpoints,
        events: this.events,
        jobs,
        clock: this.clock.read,
        onError,
        sender: this.sender.send,
      },
      {
        send: { timeoutMs: 1000, clock: this.clock.read },
        retryScheduleMs: SCHEDULE_MS,
        maxPendingPerEndpoint: 10_000,
        concurrency: 16,
        deliversInProcess: true,
        ...options,
      },
    );
    await module.ensureIndexes();
    this.modules.push(module);
    this.queues.set(module, jobs);
    return module;
  }

  /** The job of a delivery (one per delivery), or null. */
  job(deliveryId: string): Promise<{ nextRunAt: Date | null; lockedAt: Date | null } | null> {
    return this.database.db
      .collection<{ name: string; data: { deliveryId: string }; nextRunAt: Date | null; lockedAt: Date | null }>("jobs")
      .findOne({ name: DELIVERY_JOB, "data.deliveryId": deliveryId }, { projection: { _id: 0, nextRunAt: 1, lockedAt: 1 } });
  }

  /** The guarantee jobs of fan-out batches (one per batch of first attempts sent at once). */
  firstAttemptJobs(): Promise<{ data: FirstAttemptsJobData; nextRunAt: Date | null }[]> {
    return this.database.db
      .collection<{ name: string; data: FirstAttemptsJobData; nextRunAt: Date | null }>("jobs")
      .find({ name: FIRST_ATTEMPTS_JOB }, { projection: { _id: 0, data: 1, nextRunAt: 1 } })
      .toArray();
  }

  async addEndpoint(fields: Partial<WebhookEndpointDocument> = {}): Promise<WebhookEndpointDocument> {
    const registered = newWebhookEndpoint({
      id: newUuid(),
      scope: { projectId: this.projectId, livemode: false },
      url: `https://receiver.example.com/${newUuid()}`,
      description: "",
      eventTypes: ["*"],
      now: this.clock.read(),
    });
    const endpoint: WebhookEndpointDocument = { ...registered, ...fields };
    await this.endpoints.insert(endpoint);
    return endpoint;
  }

  /** An event of the harness's project, logged (the worker reads it back for retries). */
  async logEvent(type = "user.created", fields: Partial<EventDocument> = {}): Promise<EventDocument> {
    const event: EventDocument = {
      _id: newEventId(),
      project_id: this.projectId,
      livemode: false,
      type,
      created_at: this.clock.read(),
      data: { object: { id: "123456789", object: "user" } },
      fanned_out: true,
      ...fields,
    };
    await this.events.insertOnce(event);
    return event;
  }

  /** A pending delivery as an API process records it (unclaimed, due now), or with the fields given. */
  async recordDelivery(endpoint: WebhookEndpointDocument, event: EventDocument, fields: Partial<WebhookDeliveryDocument> = {}): Promise<string> {
    const record = { ...deliveryRecord(endpoint, event, this.clock.read(), "unclaimed"), ...fields };
    await this.database.db.collection<WebhookDeliveryDocument>("webhook_deliveries").insertOne(record);
    return record._id;
  }

  record(id: string): Promise<WebhookDeliveryDocument | null> {
    return this.database.db.collection<WebhookDeliveryDocument>("webhook_deliveries").findOne({ _id: id });
  }

  recordsOf(endpointId: string): Promise<WebhookDeliveryDocument[]> {
    return this.database.db
      .collection<WebhookDeliveryDocument>("webhook_deliveries")
      .find({ endpoint_id: endpointId })
      .sort({ event_id: 1 })
      .toArray();
  }

  /** Jobs of any kind in the database. */
  jobCount(): Promise<number> {
    return this.database.db.collection("jobs").countDocuments({});
  }

  /** A handler context of a caller of the harness's project, for WebhookEndpointsServiceImpl. */
  callerContext(): HandlerContext {
    return testHandlerContext(
      WebhookEndpointsService.method.deleteWebhookEndpoint,
      createContextValues().set(principalKey, {
        apiKeyId: "key_test",
        projectId: this.projectId,
        organizationId: "org_test",
        livemode: false,
        rateLimit: 1000,
      }),
    );
  }

  async close(): Promise<void> {
    for (const module of this.modules) {
      await Promise.all([module.stop(), this.queues.get(module)!.stop()]);
    }
    await this.database.db.dropDatabase();
    await this.database.close();
  }
}
