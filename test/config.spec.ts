// Every environment variable: its default, a valid value read back, and invalid values refused with a
// ConfigError that names the variable.
import path from "node:path";
import { expect } from "chai";
import { configuredTimings } from "../src/app.ts";
import { ConfigError, loadConfig, parseDuration, type Config } from "../src/config.ts";

function refused(env: Record<string, string>, message: RegExp): void {
  let thrown: unknown;
  try {
    loadConfig(env);
  } catch (error) {
    thrown = error;
  }
  expect(thrown, `${JSON.stringify(env)} was accepted`).to.be.instanceOf(ConfigError);
  expect((thrown as ConfigError).message).to.match(message);
}

const SANDBOX_KEY = "svc_test_abcdefghijklmnopqrstuvwx";
const LIVE_KEY = "svc_live_ABCDEFGHIJKLMNOPQRSTUVWX";

describe("config", () => {
  it("has a default for every variable, today's values", () => {
    expect(loadConfig({})).to.deep.equal({
      role: "all",
      host: "127.0.0.1",
      port: 8080,
      grpcPort: 50051,
      grpcIdleTimeoutMs: 10_000,
      grpcMaxConnectionsPerAddress: 100,
      mongodbUri: undefined,
      dataDir: path.resolve(".svc-data"),
      adminToken: undefined,
      bootstrap: true,
      sandboxKey: undefined,
      liveKey: undefined,
      logLevel: "info",
      rateLimit: 6000,
      maxStreamsPerKey: 20,
      maxStreamBacklog: 10_000,
      webhookRetrySchedule: [60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 86_400_000],
      webhookTimeoutMs: 10_000,
      webhookConcurrency: 256,
      webhookRecoveryRate: 10,
      authCacheMs: 1000,
      settingsCacheMs: 1000,
      relaySweepMs: 5000,
      relayStaleMs: 10_000,
      jobPollMs: 1000,
      jobLockMs: 60_000,
      jobConcurrency: 50,
      ledgerStepConcurrency: 250,
      walletSyncBudgetMs: 2000,
      walletRetrySchedule: [10_000, 60_000, 300_000, 1_800_000, 7_200_000],
      shutdownGraceMs: 10_000,
      idempotencyLockMs: 30_000,
      dashboardSecureCookie: "auto",
      dashboardSignInLimit: 10,
    } satisfies Config);
  });

  it("treats an empty variable as unset", () => {
    expect(loadConfig({ PORT: "", SVC_ROLE: "", LOG_LEVEL: "", MONGODB_URI: "" })).to.deep.equal(loadConfig({}));
  });

  it("reads every variable", () => {
    const config = loadConfig({
      SVC_ROLE: "worker",
      HOST: "0.0.0.0",
      PORT: "9000",
      GRPC_PORT: "9001",
      SVC_GRPC_IDLE_TIMEOUT_MS: "30000",
      SVC_GRPC_MAX_CONNECTIONS_PER_ADDRESS: "16",
      MONGODB_URI: "mongodb://db1,db2/svc?replicaSet=rs0",
      SVC_DATA_DIR: "/var/lib/svc-dev",
      SVC_ADMIN_TOKEN: "adm_0123456789abcdef",
      SVC_BOOTSTRAP: "1",
      SVC_SANDBOX_KEY: SANDBOX_KEY,
      SVC_LIVE_KEY: LIVE_KEY,
      LOG_LEVEL: "warn",
      SVC_RATE_LIMIT: "100",
      SVC_WEBHOOK_RETRY_SCHEDULE: "1s,2s,3s,4m,5h,600ms",
      SVC_WEBHOOK_TIMEOUT_MS: "5000",
      SVC_WEBHOOK_CONCURRENCY: "32",
      SVC_WEBHOOK_RECOVERY_RATE: "25",
      SVC_AUTH_CACHE_MS: "0",
      SVC_SETTINGS_CACHE_MS: "2000",
      SVC_RELAY_SWEEP_MS: "1000",
      SVC_RELAY_STALE_MS: "3000",
      SVC_JOB_POLL_MS: "200",
      SVC_JOB_LOCK_MS: "30000",
      SVC_JOB_CONCURRENCY: "5",
      SVC_LEDGER_STEP_CONCURRENCY: "40",
      SVC_WALLET_SYNC_BUDGET_MS: "500",
      SVC_WALLET_RETRY_SCHEDULE: "1s,1m",
      SVC_SHUTDOWN_GRACE_MS: "2500",
      SVC_IDEMPOTENCY_LOCK_MS: "5000",
      SVC_DASHBOARD_SECURE_COOKIE: "always",
      SVC_DASHBOARD_SIGN_IN_LIMIT: "3",
      SVC_MAX_STREAMS_PER_KEY: "7",
      SVC_MAX_STREAM_BACKLOG: "500",
    });
    expect(config).to.deep.equal({
      role: "worker",
      host: "0.0.0.0",
      port: 9000,
      grpcPort: 9001,
      grpcIdleTimeoutMs: 30_000,
      grpcMaxConnectionsPerAddress: 16,
      mongodbUri: "mongodb://db1,db2/svc?replicaSet=rs0",
      dataDir: "/var/lib/svc-dev",
      adminToken: "adm_0123456789abcdef",
      bootstrap: true,
      sandboxKey: SANDBOX_KEY,
      liveKey: LIVE_KEY,
      logLevel: "warn",
      rateLimit: 100,
      maxStreamsPerKey: 7,
      maxStreamBacklog: 500,
      webhookRetrySchedule: [1000, 2000, 3000, 240_000, 18_000_000, 600],
      webhookTimeoutMs: 5000,
      webhookConcurrency: 32,
      webhookRecoveryRate: 25,
      authCacheMs: 0,
      settingsCacheMs: 2000,
      relaySweepMs: 1000,
      relayStaleMs: 3000,
      jobPollMs: 200,
      jobLockMs: 30_000,
      jobConcurrency: 5,
      ledgerStepConcurrency: 40,
      walletSyncBudgetMs: 500,
      walletRetrySchedule: [1000, 60_000],
      shutdownGraceMs: 2500,
      idempotencyLockMs: 5000,
      dashboardSecureCookie: "always",
      dashboardSignInLimit: 3,
    } satisfies Config);
  });

  it("bootstraps the Default project with the embedded database, and with MongoDB only when asked", () => {
    expect(loadConfig({}).bootstrap).to.equal(true);
    expect(loadConfig({ MONGODB_URI: "mongodb://localhost/svc" }).bootstrap).to.equal(false);
    expect(loadConfig({ MONGODB_URI: "mongodb://localhost/svc", SVC_BOOTSTRAP: "0" }).bootstrap).to.equal(false);
    expect(loadConfig({ MONGODB_URI: "mongodb+srv://user:pw@cluster.example.com/svc", SVC_BOOTSTRAP: "1" }).bootstrap).to.equal(true);
  });

  it("resolves SVC_DATA_DIR from the working directory; a directory that does not exist yet is accepted", () => {
    expect(loadConfig({ SVC_DATA_DIR: "data/dev" }).dataDir).to.equal(path.resolve("data/dev"));
    expect(loadConfig({ SVC_DATA_DIR: "/nonexistent/svc-data" }).dataDir).to.equal("/nonexistent/svc-data");
    refused({ SVC_DATA_DIR: "package.json" }, /^SVC_DATA_DIR must be a directory \(created if missing\), got "package.json", which is not one$/);
  });

  it("accepts every pino level and silent", () => {
    for (const level of ["trace", "debug", "info", "warn", "error", "fatal", "silent"]) {
      expect(loadConfig({ LOG_LEVEL: level }).logLevel).to.equal(level);
    }
  });

  it("accepts host names and IPv6 addresses as HOST", () => {
    expect(loadConfig({ HOST: "::" }).host).to.equal("::");
    expect(loadConfig({ HOST: "localhost" }).host).to.equal("localhost");
    expect(loadConfig({ HOST: "svc-1.internal.example.com" }).host).to.equal("svc-1.internal.example.com");
  });

  it("accepts the bounds of integer ranges", () => {
    expect(loadConfig({ PORT: "0", GRPC_PORT: "65535" })).to.include({ port: 0, grpcPort: 65535 });
    expect(loadConfig({ SVC_SHUTDOWN_GRACE_MS: "0", SVC_RELAY_STALE_MS: "0" })).to.include({ shutdownGraceMs: 0, relayStaleMs: 0 });
    expect(loadConfig({ SVC_GRPC_IDLE_TIMEOUT_MS: "1000", SVC_GRPC_MAX_CONNECTIONS_PER_ADDRESS: "1" })).to.include({
      grpcIdleTimeoutMs: 1000,
      grpcMaxConnectionsPerAddress: 1,
    });
  });

  describe("refuses", () => {
    const cases: Array<[string, string, RegExp]> = [
      ["SVC_ROLE", "both", /^SVC_ROLE must be one of all, api, worker, got "both"$/],
      ["HOST", "not a host", /^HOST must be an IP address or a host name, got "not a host"$/],
      ["HOST", "-leading.dash", /^HOST must be/],
      ["PORT", "http", /^PORT must be an integer from 0 to 65535, got "http"$/],
      ["PORT", "65536", /^PORT must be an integer from 0 to 65535, got "65536"$/],
      ["PORT", "80.5", /^PORT must be an integer/],
      ["PORT", "-1", /^PORT must be an integer/],
      ["PORT", "1e3", /^PORT must be an integer/],
      ["GRPC_PORT", "x", /^GRPC_PORT must be an integer from 0 to 65535/],
      ["SVC_GRPC_IDLE_TIMEOUT_MS", "999", /^SVC_GRPC_IDLE_TIMEOUT_MS must be an integer from 1000 to 3600000, got "999"$/],
      ["SVC_GRPC_IDLE_TIMEOUT_MS", "10s", /^SVC_GRPC_IDLE_TIMEOUT_MS must be an integer from 1000 to 3600000/],
      ["SVC_GRPC_MAX_CONNECTIONS_PER_ADDRESS", "0", /^SVC_GRPC_MAX_CONNECTIONS_PER_ADDRESS must be an integer from 1 to 1000000, got "0"$/],
      ["SVC_GRPC_MAX_CONNECTIONS_PER_ADDRESS", "1000001", /^SVC_GRPC_MAX_CONNECTIONS_PER_ADDRESS must be an integer from 1 to 1000000/],
      ["MONGODB_URI", "postgres://secret@db/svc", /^MONGODB_URI must be a mongodb:\/\/ or mongodb\+srv:\/\/ connection string$/],
      ["MONGODB_URI", "mongodb://", /^MONGODB_URI must be/],
      ["SVC_ADMIN_TOKEN", "short", /^SVC_ADMIN_TOKEN must be at least 16 printable characters without spaces$/],
      ["SVC_ADMIN_TOKEN", "a token with spaces inside", /^SVC_ADMIN_TOKEN must be/],
      ["SVC_BOOTSTRAP", "yes", /^SVC_BOOTSTRAP must be one of 0, 1, got "yes"$/],
      ["SVC_SANDBOX_KEY", LIVE_KEY, /^SVC_SANDBOX_KEY must be svc_test_ followed by at least 24 letters or digits$/],
      ["SVC_SANDBOX_KEY", "svc_test_short", /^SVC_SANDBOX_KEY must be svc_test_/],
      ["SVC_LIVE_KEY", SANDBOX_KEY, /^SVC_LIVE_KEY must be svc_live_ followed by at least 24 letters or digits$/],
      ["LOG_LEVEL", "verbose", /^LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent, got "verbose"$/],
      ["LOG_LEVEL", "INFO", /^LOG_LEVEL must be one of/],
      ["SVC_RATE_LIMIT", "0", /^SVC_RATE_LIMIT must be an integer from 1 to 1000000000, got "0"$/],
      ["SVC_WEBHOOK_RETRY_SCHEDULE", "1m,5m", /^SVC_WEBHOOK_RETRY_SCHEDULE must list 6 comma-separated delays, got 2 in "1m,5m"$/],
      ["SVC_WEBHOOK_RETRY_SCHEDULE", "1m,5m,30m,2h,6h,1d", /^SVC_WEBHOOK_RETRY_SCHEDULE: "1d" is not a duration like 500ms, 30s, 5m or 2h$/],
      ["SVC_WEBHOOK_TIMEOUT_MS", "0", /^SVC_WEBHOOK_TIMEOUT_MS must be an integer from 1 to 600000/],
      ["SVC_WEBHOOK_CONCURRENCY", "0", /^SVC_WEBHOOK_CONCURRENCY must be an integer from 1 to 10000/],
      ["SVC_WEBHOOK_RECOVERY_RATE", "0", /^SVC_WEBHOOK_RECOVERY_RATE must be an integer from 1 to 10000/],
      ["SVC_AUTH_CACHE_MS", "60001", /^SVC_AUTH_CACHE_MS must be an integer from 0 to 60000/],
      ["SVC_SETTINGS_CACHE_MS", "-5", /^SVC_SETTINGS_CACHE_MS must be an integer from 0 to 60000/],
      ["SVC_RELAY_SWEEP_MS", "5s", /^SVC_RELAY_SWEEP_MS must be an integer from 10 to 3600000/],
      ["SVC_RELAY_STALE_MS", "3600001", /^SVC_RELAY_STALE_MS must be an integer from 0 to 3600000/],
      ["SVC_JOB_POLL_MS", "0", /^SVC_JOB_POLL_MS must be an integer from 10 to 60000/],
      ["SVC_JOB_LOCK_MS", "999", /^SVC_JOB_LOCK_MS must be an integer from 1000 to 3600000/],
      ["SVC_JOB_CONCURRENCY", "0", /^SVC_JOB_CONCURRENCY must be an integer from 1 to 10000/],
      ["SVC_LEDGER_STEP_CONCURRENCY", "0", /^SVC_LEDGER_STEP_CONCURRENCY must be an integer from 1 to 10000/],
      ["SVC_WALLET_SYNC_BUDGET_MS", "60001", /^SVC_WALLET_SYNC_BUDGET_MS must be an integer from 0 to 60000/],
      ["SVC_WALLET_RETRY_SCHEDULE", "10s,,1m", /^SVC_WALLET_RETRY_SCHEDULE: "" is not a duration/],
      ["SVC_WALLET_RETRY_SCHEDULE", Array(21).fill("1s").join(","), /^SVC_WALLET_RETRY_SCHEDULE must list 1 to 20 comma-separated delays, got 21/],
      ["SVC_SHUTDOWN_GRACE_MS", "600001", /^SVC_SHUTDOWN_GRACE_MS must be an integer from 0 to 600000/],
    ];
    for (const [name, value, message] of cases) {
      it(`${name}=${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value)}`, () => refused({ [name]: value }, message));
    }

    it("without repeating a MongoDB password", () => {
      let message = "";
      try {
        loadConfig({ MONGODB_URI: "mongodb//user:hunter2secret@db/svc" });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).to.match(/^MONGODB_URI/);
      expect(message).not.to.include("hunter2secret");
    });
  });

  it("gives the app its timings", () => {
    const config = loadConfig({
      SVC_JOB_POLL_MS: "200",
      SVC_JOB_LOCK_MS: "5000",
      SVC_RELAY_SWEEP_MS: "300",
      SVC_RELAY_STALE_MS: "400",
      SVC_WALLET_SYNC_BUDGET_MS: "50",
      SVC_WALLET_RETRY_SCHEDULE: "1s",
      SVC_SHUTDOWN_GRACE_MS: "600",
    });
    // Timings that are limits of the contract, not settings, may sit beside these.
    expect(configuredTimings(config)).to.deep.include({
      jobPollMs: 200,
      jobLockLifetimeMs: 5000,
      sweepIntervalMs: 300,
      sweepStaleAfterMs: 400,
      walletSyncBudgetMs: 50,
      walletRetryDelaysMs: [1000],
      shutdownGraceMs: 600,
    });
  });

  it("parses durations in ms, s, m and h", () => {
    expect([parseDuration("750ms"), parseDuration("30s"), parseDuration(" 5m "), parseDuration("2h")]).to.deep.equal([
      750, 30_000, 300_000, 7_200_000,
    ]);
    expect(() => parseDuration("1.5s")).to.throw(ConfigError, /is not a duration/);
  });
});
