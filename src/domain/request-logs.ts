// The request log's vocabulary (docs/contract.md, Request logs): the doors a call is recorded from, the methods
// it names, how long an entry is kept, and the `status` filter (one status, or a class such as `4xx`).
import { validationError } from "./errors.ts";

export const REQUEST_LOG_SOURCES = ["rest", "connect", "grpc", "dashboard"] as const;
export type RequestLogSource = (typeof REQUEST_LOG_SOURCES)[number];

/** A REST call's HTTP verb; every other door's calls are `RPC`. */
export const REQUEST_LOG_METHODS = ["GET", "POST", "PATCH", "DELETE", "RPC"] as const;

export const REQUEST_LOG_RETENTION_SECONDS = 30 * 24 * 60 * 60;

/** A request id as the servers draw them (`req_` and base62), with `_<n>` for the second and later calls of one dashboard page. */
export const REQUEST_LOG_ID_PATTERN = /^req_[A-Za-z0-9]{1,64}(_[0-9]{1,4})?$/;

/** Statuses from `gte` up to, not including, `lt`. */
export interface StatusRange {
  gte: number;
  lt: number;
}

const STATUS_CLASS = /^([1-5])xx$/i;
const STATUS_CODE = /^[1-5][0-9]{2}$/;

/** `404` is that status alone; `4xx` every status from 400 to 499. Anything else is 422 naming `status`. */
export function statusFilter(value: string): StatusRange {
  const statusClass = STATUS_CLASS.exec(value);
  if (statusClass) {
    const gte = Number(statusClass[1]) * 100;
    return { gte, lt: gte + 100 };
  }
  if (STATUS_CODE.test(value)) return { gte: Number(value), lt: Number(value) + 1 };
  throw validationError("status", "status must be an HTTP status (404) or a class of statuses (2xx, 4xx, 5xx).");
}

export function isRequestLogSource(value: string): value is RequestLogSource {
  return (REQUEST_LOG_SOURCES as readonly string[]).includes(value);
}

export function isRequestLogMethod(value: string): boolean {
  return (REQUEST_LOG_METHODS as readonly string[]).includes(value);
}
