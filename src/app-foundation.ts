// What every domain's wiring shares: the configuration, clock, timings, logging, repositories, metrics and the one
// job queue (Agenda), whose worker runs the jobs every domain defines.
import type { Config } from "./config.ts";
import type { Clock } from "./domain/clock.ts";
import { JobQueue } from "./jobs/job-queue.ts";
import type { Logger } from "./observability/logger.ts";
import { Metrics } from "./observability/metrics.ts";
import { type Database, isReplicaSet } from "./store/database.ts";
import { DashboardSessionRepository } from "./store/dashboard-session-repository.ts";
import { DELIVERY_JOB } from "./webhooks/webhook-delivery.ts";
import type { AppTimings } from "./app-timings.ts";
import { createRepositories, type Repositories } from "./app-repositories.ts";
import { type Worker, worker } from "./app-workers.ts";

export interface Foundation {
  config: Config;
  database: Database;
  clock: Clock;
  timings: AppTimings;
  logger: Logger;
  /** Where unexpected errors go, with what was running. */
  onError: (error: unknown, context: string) => void;
  repositories: Repositories;
  dashboardSessions: DashboardSessionRepository;
  metrics: Metrics;
  jobs: JobQueue;
  /** Change streams are available (a replica set): other processes' writes wake this one. */
  replicaSet: boolean;
  /** Whether this process runs jobs, sweeps and deliveries (roles worker and all) or only enqueues them (api). */
  runsJobs: boolean;
}

export async function createFoundation(
  base: Pick<Foundation, "config" | "database" | "clock" | "timings" | "logger" | "onError">,
): Promise<Foundation> {
  const { config, database, clock, timings, onError } = base;
  const repositories = createRepositories(database);
  const metrics = new Metrics({
    pendingDeliveries: () => repositories.webhookDeliveries.countAllPending(),
    deliveryLagSeconds: () => jobs.lagSeconds(clock(), [DELIVERY_JOB]),
    jobLagSeconds: () => jobs.lagSeconds(clock()),
  });
  repositories.events.onInserted((events) => {
    for (const event of events) metrics.eventsCreated.inc({ type: event.type });
  });
  const dashboardSessions = new DashboardSessionRepository(database.db);
  await Promise.all([...Object.values(repositories), dashboardSessions].map((r) => ("ensureIndexes" in r ? r.ensureIndexes() : undefined)));
  const replicaSet = await isReplicaSet(database);
  const jobs = new JobQueue(database.db, {
    pollIntervalMs: timings.jobPollMs,
    lockLifetimeMs: timings.jobLockLifetimeMs,
    // Delivery jobs and ledger steps have their own concurrency (SVC_WEBHOOK_CONCURRENCY,
    // SVC_LEDGER_STEP_CONCURRENCY) beside the other jobs'.
    maxConcurrency: config.jobConcurrency + config.webhookConcurrency + config.ledgerStepConcurrency,
    defaultConcurrency: config.jobConcurrency,
    changeStreams: replicaSet,
  });
  jobs.onFailure((error, name) => onError(error, `job ${name}`));
  return { ...base, repositories, dashboardSessions, metrics, jobs, replicaSet, runsJobs: config.role !== "api" };
}

/**
 * Runs due jobs in a process that runs jobs (an API process only enqueues). Stopping ends taking jobs at once
 * and waits for the running ones to save what follows them; it stops in every role.
 */
export function jobQueueWorker({ jobs, runsJobs }: Foundation): Worker {
  return worker({ ...(runsJobs ? { start: () => jobs.start() } : {}), stop: () => jobs.stop() });
}
