// Every environment variable of the service, parsed and validated in one place.

export type Role = "all" | "api" | "worker";

export interface Config {
  /** api: HTTP and gRPC, enqueues work; worker: runs jobs and deliveries; all: both (one process). */
  role: Role;
  host: string;
  port: number;
  grpcPort: number;
  /** Unset: the embedded in-memory database is started in process. */
  mongodbUri: string | undefined;
  /** Bearer token of AdminService; generated (and printed) when unset. */
  adminToken: string | undefined;
  /** Ensure the "Default" organization and project exist (always with the embedded database). */
  bootstrap: boolean;
  sandboxKey: string | undefined;
  liveKey: string | undefined;
  /** Requests per API key (or client address) per 60 s window. */
  rateLimit: number;
  /** Delays after failed delivery attempts 1..6, in ms. */
  webhookRetrySchedule: number[];
  webhookTimeoutMs: number;
  /** How long an authenticated key is trusted before it is read again (revocations elsewhere). */
  authCacheMs: number;
  /** How long project settings and signup flows are reused before they are read again. */
  settingsCacheMs: number;
  /** How often a worker looks for due deliveries when the database cannot notify it (not a replica set). */
  workerPollMs: number;
  /** How often the relay sweeper looks for events a crashed request left unrelayed. */
  relaySweepMs: number;
  /** How old an unrelayed event must be before the sweeper takes it from its request. */
  relayStaleMs: number;
}

export class ConfigError extends Error {}

const DURATION = /^(\d+)(ms|s|m|h)$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

export function parseDuration(text: string): number {
  const match = DURATION.exec(text.trim());
  if (!match) throw new ConfigError(`"${text}" is not a duration like 500ms, 30s, 5m or 2h`);
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function optional(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw === "" ? undefined : raw;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const mongodbUri = optional(env, "MONGODB_URI");
  const schedule = (optional(env, "SVC_WEBHOOK_RETRY_SCHEDULE") ?? "1m,5m,30m,2h,6h,24h").split(",");
  if (schedule.length !== 6) {
    throw new ConfigError(`SVC_WEBHOOK_RETRY_SCHEDULE must list 6 delays (after attempts 1 to 6), got ${schedule.length}`);
  }
  const role = optional(env, "SVC_ROLE") ?? "all";
  if (role !== "all" && role !== "api" && role !== "worker") {
    throw new ConfigError(`SVC_ROLE must be all, api or worker, got "${role}"`);
  }
  return {
    role,
    host: optional(env, "HOST") ?? "127.0.0.1",
    port: integer(env, "PORT", 8080, 0, 65535),
    grpcPort: integer(env, "GRPC_PORT", 50051, 0, 65535),
    mongodbUri,
    adminToken: optional(env, "SVC_ADMIN_TOKEN"),
    bootstrap: mongodbUri === undefined || env.SVC_BOOTSTRAP === "1",
    sandboxKey: optional(env, "SVC_SANDBOX_KEY"),
    liveKey: optional(env, "SVC_LIVE_KEY"),
    rateLimit: integer(env, "SVC_RATE_LIMIT", 6000, 1, 1_000_000_000),
    webhookRetrySchedule: schedule.map(parseDuration),
    webhookTimeoutMs: integer(env, "SVC_WEBHOOK_TIMEOUT_MS", 10_000, 1, 600_000),
    authCacheMs: integer(env, "SVC_AUTH_CACHE_MS", 1000, 0, 60_000),
    settingsCacheMs: integer(env, "SVC_SETTINGS_CACHE_MS", 1000, 0, 60_000),
    workerPollMs: integer(env, "SVC_WORKER_POLL_MS", 250, 10, 60_000),
    relaySweepMs: integer(env, "SVC_RELAY_SWEEP_MS", 5000, 10, 3_600_000),
    relayStaleMs: integer(env, "SVC_RELAY_STALE_MS", 10_000, 0, 3_600_000),
  };
}
