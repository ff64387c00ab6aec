// Every environment variable of the service, parsed and validated in one place. A wrong value stops the process
// at start with a ConfigError naming the variable, the accepted values and what was given.
import { type Stats, statSync } from "node:fs";
import { isIP } from "node:net";
import path from "node:path";
import { apiKeyLivemode } from "./domain/api-keys.ts";
import { DEFAULT_MAX_STREAM_BACKLOG, DEFAULT_MAX_STREAMS_PER_KEY } from "./domain/limits.ts";

export type Role = "all" | "api" | "worker";

/** pino's levels, plus `silent` (no logs). */
const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  /** api: HTTP and gRPC, enqueues work; worker: runs jobs and deliveries; all: both (one process). */
  role: Role;
  host: string;
  port: number;
  grpcPort: number;
  /** A gRPC (HTTP/2) session with no call open this long is closed; a new connection's first call must come sooner. */
  grpcIdleTimeoutMs: number;
  /** Connections one client address may hold open to GRPC_PORT at once; more are closed on arrival. */
  grpcMaxConnectionsPerAddress: number;
  /** Unset: the embedded database is started in process (durable in `dataDir`, a one-member replica set). */
  mongodbUri: string | undefined;
  /** Absolute path of the directory the embedded database keeps its data in (unused with `mongodbUri`). */
  dataDir: string;
  /** Bearer token of AdminService; generated (and printed) when unset. */
  adminToken: string | undefined;
  /** Ensure the "Default" organization and project exist (always with the embedded database). */
  bootstrap: boolean;
  sandboxKey: string | undefined;
  liveKey: string | undefined;
  /** Level of the JSON logs on standard output. */
  logLevel: LogLevel;
  /** Requests per API key (or client address) per 60 s window. */
  rateLimit: number;
  /** Streams (StreamEvents) one API key may hold open at once on one process. */
  maxStreamsPerKey: number;
  /** Messages a stream may hold for a reader that does not keep up before it fails with stream_fell_behind. */
  maxStreamBacklog: number;
  /** Delays after failed delivery attempts 1..6, in ms. */
  webhookRetrySchedule: number[];
  webhookTimeoutMs: number;
  /** Delivery attempts one process runs at once. */
  webhookConcurrency: number;
  /** First attempts of recovered deliveries per second per endpoint (POST /v1/webhook-endpoints/{id}/recover). */
  webhookRecoveryRate: number;
  /** How long an authenticated key is trusted before it is read again (revocations elsewhere). */
  authCacheMs: number;
  /** How long project settings and signup flows are reused before they are read again. */
  settingsCacheMs: number;
  /** How often the relay sweeper looks for events a crashed request left unrelayed. */
  relaySweepMs: number;
  /** How old an unrelayed event must be before the sweeper takes it from its request. */
  relayStaleMs: number;
  /** How often Agenda looks for due jobs when no change stream wakes it, and the ledger for due steps. */
  jobPollMs: number;
  /** How long a running job stays locked to its process; past it, another process may take the job. */
  jobLockMs: number;
  /** Agenda jobs (wallet provisioning) one process runs at once. */
  jobConcurrency: number;
  /** Runs of transactions' step jobs one process runs at once, beside the other jobs' `jobConcurrency`. */
  ledgerStepConcurrency: number;
  /** How long a user creation waits for the custodian before answering `wallet_status: pending`. */
  walletSyncBudgetMs: number;
  /** Delays of the wallet provisioning retries, in ms; their number is the number of retries. */
  walletRetrySchedule: number[];
  /** How long a draining process lets running requests finish. */
  shutdownGraceMs: number;
  /** How long a request holding an Idempotency-Key keeps it before a retry may take it over (its process died). */
  idempotencyLockMs: number;
  /**
   * The dashboard cookie's Secure attribute: "auto" sets it when the request came over TLS as the proxy says
   * (`X-Forwarded-Proto: https`); "always" sets it on every answer.
   */
  dashboardSecureCookie: "auto" | "always";
  /** Dashboard sign-in attempts per client address per 60 s. */
  dashboardSignInLimit: number;
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

const DURATION = /^(\d+)(ms|s|m|h)$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

export function parseDuration(text: string): number {
  const match = DURATION.exec(text.trim());
  if (!match) throw new ConfigError(`"${text}" is not a duration like 500ms, 30s, 5m or 2h`);
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

function optional(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw === "" ? undefined : raw;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  const value = /^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, values: readonly T[], fallback: T): T {
  const raw = optional(env, name) ?? fallback;
  if (!(values as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${values.join(", ")}, got "${raw}"`);
  return raw as T;
}

/** A comma-separated list of `min` to `max` durations (`500ms`, `30s`, `5m`, `2h`). */
function durations(env: NodeJS.ProcessEnv, name: string, fallback: string, length: { min: number; max: number }): number[] {
  const raw = optional(env, name) ?? fallback;
  const items = raw.split(",");
  const expected = length.min === length.max ? `${length.min}` : `${length.min} to ${length.max}`;
  if (items.length < length.min || items.length > length.max) {
    throw new ConfigError(`${name} must list ${expected} comma-separated delays, got ${items.length} in "${raw}"`);
  }
  return items.map((item) => {
    try {
      return parseDuration(item);
    } catch (error) {
      throw new ConfigError(`${name}: ${(error as Error).message}`);
    }
  });
}

function host(env: NodeJS.ProcessEnv): string {
  const raw = optional(env, "HOST") ?? "127.0.0.1";
  const hostname = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/;
  if (isIP(raw) === 0 && !hostname.test(raw)) throw new ConfigError(`HOST must be an IP address or a host name, got "${raw}"`);
  return raw;
}

function mongodbUri(env: NodeJS.ProcessEnv): string | undefined {
  const raw = optional(env, "MONGODB_URI");
  if (raw === undefined) return undefined;
  let valid = /^mongodb(\+srv)?:\/\/./.test(raw);
  try {
    new URL(raw);
  } catch {
    valid = false;
  }
  // The URI may hold a password: the message does not repeat it.
  if (!valid) throw new ConfigError("MONGODB_URI must be a mongodb:// or mongodb+srv:// connection string");
  return raw;
}

/** SVC_DATA_DIR, absolute (relative paths are taken from the working directory); created at start if missing. */
function dataDir(env: NodeJS.ProcessEnv): string {
  const raw = optional(env, "SVC_DATA_DIR") ?? ".svc-data";
  if (raw.includes("\0")) throw new ConfigError("SVC_DATA_DIR must be a directory path");
  const resolved = path.resolve(raw);
  let stats: Stats | undefined;
  try {
    stats = statSync(resolved);
  } catch {
    stats = undefined; // missing: created at start
  }
  if (stats !== undefined && !stats.isDirectory()) {
    throw new ConfigError(`SVC_DATA_DIR must be a directory (created if missing), got "${raw}", which is not one`);
  }
  return resolved;
}

function adminToken(env: NodeJS.ProcessEnv): string | undefined {
  const raw = optional(env, "SVC_ADMIN_TOKEN");
  if (raw !== undefined && !/^[\x21-\x7e]{16,}$/.test(raw)) {
    throw new ConfigError("SVC_ADMIN_TOKEN must be at least 16 printable characters without spaces");
  }
  return raw;
}

function bootstrapKey(env: NodeJS.ProcessEnv, name: string, livemode: boolean): string | undefined {
  const raw = optional(env, name);
  if (raw !== undefined && apiKeyLivemode(raw) !== livemode) {
    throw new ConfigError(`${name} must be ${livemode ? "svc_live_" : "svc_test_"} followed by at least 24 letters or digits`);
  }
  return raw;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const uri = mongodbUri(env);
  const bootstrap = oneOf(env, "SVC_BOOTSTRAP", ["0", "1"], "0") === "1";
  return {
    role: oneOf(env, "SVC_ROLE", ["all", "api", "worker"], "all"),
    host: host(env),
    port: integer(env, "PORT", 8080, 0, 65535),
    grpcPort: integer(env, "GRPC_PORT", 50051, 0, 65535),
    grpcIdleTimeoutMs: integer(env, "SVC_GRPC_IDLE_TIMEOUT_MS", 10_000, 1000, 3_600_000),
    grpcMaxConnectionsPerAddress: integer(env, "SVC_GRPC_MAX_CONNECTIONS_PER_ADDRESS", 100, 1, 1_000_000),
    mongodbUri: uri,
    dataDir: dataDir(env),
    adminToken: adminToken(env),
    bootstrap: uri === undefined || bootstrap,
    sandboxKey: bootstrapKey(env, "SVC_SANDBOX_KEY", false),
    liveKey: bootstrapKey(env, "SVC_LIVE_KEY", true),
    logLevel: oneOf(env, "LOG_LEVEL", LOG_LEVELS, "info"),
    rateLimit: integer(env, "SVC_RATE_LIMIT", 6000, 1, 1_000_000_000),
    maxStreamsPerKey: integer(env, "SVC_MAX_STREAMS_PER_KEY", DEFAULT_MAX_STREAMS_PER_KEY, 1, 100_000),
    maxStreamBacklog: integer(env, "SVC_MAX_STREAM_BACKLOG", DEFAULT_MAX_STREAM_BACKLOG, 1, 1_000_000),
    webhookRetrySchedule: durations(env, "SVC_WEBHOOK_RETRY_SCHEDULE", "1m,5m,30m,2h,6h,24h", { min: 6, max: 6 }),
    webhookTimeoutMs: integer(env, "SVC_WEBHOOK_TIMEOUT_MS", 10_000, 1, 600_000),
    webhookConcurrency: integer(env, "SVC_WEBHOOK_CONCURRENCY", 256, 1, 10_000),
    webhookRecoveryRate: integer(env, "SVC_WEBHOOK_RECOVERY_RATE", 10, 1, 10_000),
    authCacheMs: integer(env, "SVC_AUTH_CACHE_MS", 1000, 0, 60_000),
    settingsCacheMs: integer(env, "SVC_SETTINGS_CACHE_MS", 1000, 0, 60_000),
    relaySweepMs: integer(env, "SVC_RELAY_SWEEP_MS", 5000, 10, 3_600_000),
    relayStaleMs: integer(env, "SVC_RELAY_STALE_MS", 10_000, 0, 3_600_000),
    jobPollMs: integer(env, "SVC_JOB_POLL_MS", 1000, 10, 60_000),
    jobLockMs: integer(env, "SVC_JOB_LOCK_MS", 60_000, 1000, 3_600_000),
    jobConcurrency: integer(env, "SVC_JOB_CONCURRENCY", 50, 1, 10_000),
    ledgerStepConcurrency: integer(env, "SVC_LEDGER_STEP_CONCURRENCY", 250, 1, 10_000),
    walletSyncBudgetMs: integer(env, "SVC_WALLET_SYNC_BUDGET_MS", 2000, 0, 60_000),
    walletRetrySchedule: durations(env, "SVC_WALLET_RETRY_SCHEDULE", "10s,1m,5m,30m,2h", { min: 1, max: 20 }),
    shutdownGraceMs: integer(env, "SVC_SHUTDOWN_GRACE_MS", 10_000, 0, 600_000),
    idempotencyLockMs: integer(env, "SVC_IDEMPOTENCY_LOCK_MS", 30_000, 1000, 3_600_000),
    dashboardSecureCookie: oneOf(env, "SVC_DASHBOARD_SECURE_COOKIE", ["auto", "always"], "auto"),
    dashboardSignInLimit: integer(env, "SVC_DASHBOARD_SIGN_IN_LIMIT", 10, 1, 10_000),
  };
}
