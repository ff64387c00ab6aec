// How long background work waits and runs: the configuration's, which tests shorten.
import type { Config } from "./config.ts";
import { REQUEST_RECEIVE_TIMEOUT_MS } from "./domain/limits.ts";

export interface AppTimings {
  jobPollMs: number;
  jobLockLifetimeMs: number;
  sweepIntervalMs: number;
  sweepStaleAfterMs: number;
  walletSyncBudgetMs: number;
  walletRetryDelaysMs: number[];
  shutdownGraceMs: number;
  /** A request's headers and body must have arrived this long after it started (a contract limit; tests shorten it). */
  requestReceiveTimeoutMs: number;
}

/** The timings the configuration sets (environment variables, defaults in config.ts). */
export function configuredTimings(config: Config): AppTimings {
  return {
    jobPollMs: config.jobPollMs,
    jobLockLifetimeMs: config.jobLockMs,
    sweepIntervalMs: config.relaySweepMs,
    sweepStaleAfterMs: config.relayStaleMs,
    walletSyncBudgetMs: config.walletSyncBudgetMs,
    walletRetryDelaysMs: config.walletRetrySchedule,
    shutdownGraceMs: config.shutdownGraceMs,
    requestReceiveTimeoutMs: REQUEST_RECEIVE_TIMEOUT_MS,
  };
}
