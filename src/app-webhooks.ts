// Webhooks: the outbox relay and its sweeper, fan-out into deliveries, the delivery jobs and the endpoints service.
import { WebhookEndpointsService } from "../gen/svc/v1/webhook_endpoints_pb.ts";
import type { RegisteredService } from "./api/service-registry.ts";
import { EventRelay } from "./events/event-relay.ts";
import { RelaySweeper } from "./events/relay-sweeper.ts";
import { WebhookEndpointsServiceImpl } from "./services/webhook-endpoints-service.ts";
import type { LookupAll } from "./webhooks/address-vetting.ts";
import { DEFAULT_MAX_PENDING_PER_ENDPOINT } from "./webhooks/delivery-policy.ts";
import { WebhookDelivery } from "./webhooks/webhook-delivery.ts";
import type { Foundation } from "./app-foundation.ts";
import { remainingMs, type Worker, worker } from "./app-workers.ts";

interface WebhooksOptions {
  /** Name resolution of webhook hosts (creation checks and every attempt). */
  lookup?: LookupAll | undefined;
  /** Pending deliveries per endpoint past which new events are recorded as `queue_full`. */
  maxPendingPerEndpoint?: number | undefined;
  /** Loopback ports no endpoint may reach (this service's and its database's); the bound ones are added at listen. */
  refusedLoopbackPorts: Set<number>;
}

export async function wireWebhooks(foundation: Foundation, options: WebhooksOptions) {
  const { config, clock, repositories, jobs, metrics, timings, onError, runsJobs } = foundation;
  const send = {
    timeoutMs: config.webhookTimeoutMs,
    clock,
    refusedLoopbackPorts: options.refusedLoopbackPorts,
    ...(options.lookup ? { lookup: options.lookup } : {}),
  };
  const webhooks = new WebhookDelivery(
    {
      deliveries: repositories.webhookDeliveries,
      endpoints: repositories.webhookEndpoints,
      events: repositories.events,
      jobs,
      clock,
      onError: (e) => onError(e, "webhook delivery"),
      onAttempt: (error) => metrics.deliveryAttempts.inc({ outcome: error === null ? "succeeded" : "failed", error: error ?? "none" }),
    },
    {
      send,
      retryScheduleMs: config.webhookRetrySchedule,
      maxPendingPerEndpoint: options.maxPendingPerEndpoint ?? DEFAULT_MAX_PENDING_PER_ENDPOINT,
      concurrency: config.webhookConcurrency,
      deliversInProcess: runsJobs,
      recoveryRatePerSecond: config.webhookRecoveryRate,
    },
  );
  await webhooks.ensureIndexes();
  // In the background: a large backlog must not hold the process's start; the jobs it adds run as they are written.
  webhooks.adoptPending().catch((error: unknown) => onError(error, "webhook delivery adoption"));
  const relay = new EventRelay(repositories.events, repositories.users, webhooks.fanout, clock);
  const relaySweeper = new RelaySweeper(relay, jobs, { intervalMs: timings.sweepIntervalMs, staleAfterMs: timings.sweepStaleAfterMs });
  const endpoints = new WebhookEndpointsServiceImpl({
    endpoints: repositories.webhookEndpoints,
    deliveries: repositories.webhookDeliveries,
    events: repositories.events,
    clock,
    send,
    dispatch: (id) => webhooks.dispatch(id),
    recovery: webhooks.recovery,
    removeDeliveriesOf: (id) => webhooks.removeDeliveriesOf(id),
  });
  const services: RegisteredService[] = [
    {
      service: WebhookEndpointsService,
      visibility: "public",
      implementation: endpoints,
      replays: { createWebhookEndpoint: (response, context) => endpoints.replayedCreation(response, context) },
    },
  ];
  // The relay's sweep is a recurring job, run by one process at a time, scheduled by the processes that run jobs.
  const sweep: Worker = worker(runsJobs ? { start: () => relaySweeper.start() } : {});
  // Stops sending; attempts in flight at the deadline are cut short and recorded for a retry. It stops together
  // with the job queue, whose stop ends taking delivery jobs and waits for their runs to save their retry times.
  const deliveries: Worker = worker({ stop: (deadline) => webhooks.stop(remainingMs(deadline)) });
  return { webhooks, relay, relaySweeper, services, workers: { sweep, deliveries } };
}
