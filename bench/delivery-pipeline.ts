// The service's webhook delivery pipeline for a benchmark, wired as src/app.ts wires it: the embedded database as
// `npm start` runs it (a one-member replica set in a worker thread, in memory, so change streams wake Agenda), the
// repositories with their indexes, the job queue with the service's default settings, and webhook delivery with
// the relay that publishes into it.
import { loadConfig } from "../src/config.ts";
import type { Clock } from "../src/domain/clock.ts";
import { startEmbeddedMongo } from "../src/embedded-mongo/index.ts";
import { EventRelay } from "../src/events/event-relay.ts";
import { JobQueue } from "../src/jobs/job-queue.ts";
import { connectDatabase } from "../src/store/database.ts";
import { EventRepository } from "../src/store/event-repository.ts";
import { UserRepository } from "../src/store/user-repository.ts";
import { WebhookDeliveryRepository } from "../src/store/webhook-delivery-repository.ts";
import { WebhookEndpointRepository } from "../src/store/webhook-endpoint-repository.ts";
import { DEFAULT_MAX_PENDING_PER_ENDPOINT } from "../src/webhooks/delivery-policy.ts";
import type { AttemptSender } from "../src/webhooks/delivery-worker.ts";
import { WebhookDelivery } from "../src/webhooks/webhook-delivery.ts";
import { countCommands, countWrittenDocuments } from "./command-shapes.ts";

/** The service's configuration with nothing set: the defaults of SVC_JOB_CONCURRENCY, SVC_WEBHOOK_CONCURRENCY... */
const SERVICE_DEFAULTS = loadConfig({});
export const JOB_CONCURRENCY = SERVICE_DEFAULTS.jobConcurrency;
export const WEBHOOK_CONCURRENCY = SERVICE_DEFAULTS.webhookConcurrency;
const RETRY_SCHEDULE_MS = SERVICE_DEFAULTS.webhookRetrySchedule;

async function startDeliveryPipeline(databaseName: string) {
  const mongo = await startEmbeddedMongo({ host: "127.0.0.1", inWorkerThread: true, replSet: "rs0" });
  const uri = new URL(mongo.uri);
  uri.pathname = `/${databaseName}`;
  // BENCH_COMMANDS=1: the driver's command monitoring counts what the pipeline asks (it costs CPU: not for timed runs).
  const monitored = process.env.BENCH_COMMANDS === "1";
  const database = await connectDatabase(uri.toString(), { monitorCommands: monitored });
  const commands = monitored ? countCommands(database.client) : null;
  const written = monitored ? countWrittenDocuments(database.client) : null;
  const { db } = database;
  const events = new EventRepository(db);
  const endpoints = new WebhookEndpointRepository(db);
  const deliveries = new WebhookDeliveryRepository(db);
  const users = new UserRepository(db);
  await Promise.all([events.ensureIndexes(), endpoints.ensureIndexes(), deliveries.ensureIndexes(), users.ensureIndexes()]);
  // SVC_JOB_POLL_MS, SVC_JOB_LOCK_MS; delivery jobs have their own concurrency beside the other jobs'.
  const jobs = new JobQueue(db, {
    pollIntervalMs: 1000,
    lockLifetimeMs: 60_000,
    maxConcurrency: JOB_CONCURRENCY + WEBHOOK_CONCURRENCY,
    defaultConcurrency: JOB_CONCURRENCY,
    changeStreams: true,
  });
  return { mongo, database, db, events, endpoints, deliveries, users, jobs, commands, written };
}

export interface WebhookDeliveryBenchOptions {
  clock: Clock;
  onError: (error: unknown) => void;
  /** The service's default unless given. */
  retryScheduleMs?: number[];
  /** A fake receiver in the process; real HTTP unless given. */
  sender?: AttemptSender;
}

/**
 * The pipeline of database `databaseName` with webhook delivery over it as src/app.ts wires it in a process that
 * delivers (first attempts sent at once, the service's concurrency and bound of pending deliveries), its job queue
 * started, and the relay that publishes events into it.
 */
export async function startWebhookDelivery(databaseName: string, options: WebhookDeliveryBenchOptions) {
  const pipeline = await startDeliveryPipeline(databaseName);
  const { deliveries, endpoints, events, users, jobs } = pipeline;
  const { clock, onError, sender } = options;
  const webhooks = new WebhookDelivery(
    { deliveries, endpoints, events, jobs, clock, onError, ...(sender ? { sender } : {}) },
    {
      send: { timeoutMs: 10_000, clock },
      retryScheduleMs: options.retryScheduleMs ?? RETRY_SCHEDULE_MS,
      maxPendingPerEndpoint: DEFAULT_MAX_PENDING_PER_ENDPOINT,
      concurrency: WEBHOOK_CONCURRENCY,
      deliversInProcess: true,
    },
  );
  await webhooks.ensureIndexes();
  await jobs.start();
  return { ...pipeline, webhooks, relay: new EventRelay(events, users, webhooks.fanout, clock) };
}
