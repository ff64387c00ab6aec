// Prometheus metrics (prom-client) of one process, served at GET /metrics.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export interface MetricsSources {
  /** Deliveries waiting for an attempt, across every endpoint. */
  pendingDeliveries?: () => Promise<number>;
  /** Seconds since the oldest due delivery that nobody holds fell due. */
  deliveryLagSeconds?: () => Promise<number>;
  /** Seconds between now and the scheduled time of the oldest due job that has not started. */
  jobLagSeconds?: () => Promise<number>;
}

export class Metrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: "svc_http_requests_total",
    help: "HTTP requests answered, by route template, method and status.",
    labelNames: ["route", "method", "status"] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: "svc_http_request_duration_seconds",
    help: "HTTP request latency, from the first byte read to the last byte written.",
    labelNames: ["route", "method", "status"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });

  readonly rpcCalls = new Counter({
    name: "svc_rpc_calls_total",
    help: "Connect, gRPC-Web and gRPC calls and the dashboard's calls, by procedure, Connect code name (ok on success) and protocol.",
    labelNames: ["procedure", "code", "protocol"] as const,
    registers: [this.registry],
  });

  readonly deliveryAttempts = new Counter({
    name: "svc_webhook_delivery_attempts_total",
    help: "Webhook delivery attempts, by outcome (succeeded or failed) and error code (none on success).",
    labelNames: ["outcome", "error"] as const,
    registers: [this.registry],
  });

  readonly eventsCreated = new Counter({
    name: "svc_events_created_total",
    help: "Events written to the event log, by type.",
    labelNames: ["type"] as const,
    registers: [this.registry],
  });

  constructor(sources: MetricsSources = {}) {
    collectDefaultMetrics({ register: this.registry, prefix: "svc_process_" });
    this.addScrapedGauge(
      "svc_webhook_deliveries_pending",
      "Webhook deliveries pending or being retried (read from the database at scrape time).",
      sources.pendingDeliveries,
    );
    this.addScrapedGauge(
      "svc_webhook_delivery_lag_seconds",
      "Now minus the due time of the oldest pending delivery that nobody holds (first attempts and retries); 0 when none is.",
      sources.deliveryLagSeconds,
    );
    this.addScrapedGauge(
      "svc_job_lag_seconds",
      "Now minus the scheduled time of the oldest due job not yet started; 0 when none is due.",
      sources.jobLagSeconds,
    );
  }

  /** A gauge read from `source` at scrape time; registered without a value when the process has no source. */
  private addScrapedGauge(name: string, help: string, source: (() => Promise<number>) | undefined): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      async collect() {
        if (source) this.set(await source());
      },
    });
  }
}
