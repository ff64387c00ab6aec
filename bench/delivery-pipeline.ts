// The service's webhook delivery pipeline for a benchmark, wired as src/app.ts wires it: the embedded database as
// `npm start` runs it (a one-member replica set in a worker thread, in memory, so change streams wake Agenda), the
// repositories with their indexes, and the job queue with the service's default settings.
import { startEmbeddedMongo } from "../src/embedded-mongo/index.ts";
import { JobQueue } from "../src/jobs/job-queue.ts";
import { connectDatabase } from "../src/store/database.ts";
import { EventRepository } from "../src/store/event-repository.ts";
import { UserRepository } from "../src/store/user-repository.ts";
import { WebhookDeliveryRepository } from "../src/store/webhook-delivery-repository.ts";
import { WebhookEndpointRepository } from "../src/store/webhook-endpoint-repository.ts";

/** SVC_JOB_CONCURRENCY and SVC_WEBHOOK_CONCURRENCY's defaults. */
export const JOB_CONCURRENCY = 50;
export const WEBHOOK_CONCURRENCY = 256;

export async function startDeliveryPipeline(databaseName: string) {
  const mongo = await startEmbeddedMongo({ host: "127.0.0.1", inWorkerThread: true, replSet: "rs0" });
  const uri = new URL(mongo.uri);
  uri.pathname = `/${databaseName}`;
  const database = await connectDatabase(uri.toString());
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
  return { mongo, database, db, events, endpoints, deliveries, users, jobs };
}
