// The RequestLog object (docs/contract.md, Request log): every field present, the unset ones null. Its fields are
// also the stored entry's (store/request-log-repository.ts), which adds the tenant and keeps the time as a date.
import type { RequestLog } from "../../gen/svc/v1/request_logs_pb.ts";
import { ERROR_CATALOGUE } from "../domain/errors.ts";
import { REQUEST_LOG_ID_PATTERN, REQUEST_LOG_METHODS, REQUEST_LOG_SOURCES } from "../domain/request-logs.ts";
import { CREATED_AT } from "./example-values.ts";
import { closedObject, constant, dateTime, exampleList, listOf, named, nullable, type Static, stringEnum, Type } from "./json-schema.ts";
import { orNull, requiredIsoTime } from "./json-values.ts";

export const requestLogSchema = closedObject(
  {
    id: Type.String({ pattern: REQUEST_LOG_ID_PATTERN.source, description: "The request id: the `X-Request-Id` of the answer." }),
    object: constant("request_log"),
    method: stringEnum(REQUEST_LOG_METHODS, { description: "The HTTP verb of a REST call; `RPC` for the other doors." }),
    path: Type.String({ description: "The REST path without its query, or `/package.Service/Method`." }),
    route: nullable(Type.String({ description: "The route template (`/v1/users/{id}`) or `/package.Service/Method`; null when no route matched." })),
    status: Type.Integer({ minimum: 100, maximum: 599, description: "The HTTP status; for RPC doors, that of the same answer over REST." }),
    error_code: nullable(stringEnum(Object.keys(ERROR_CATALOGUE))),
    idempotency_key: nullable(Type.String()),
    idempotent_replayed: Type.Boolean(),
    api_key_id: nullable(Type.String()),
    source: stringEnum(REQUEST_LOG_SOURCES),
    duration_ms: Type.Integer({
      minimum: 0,
      description:
        "From the call's arrival at its door to its answer, in milliseconds; for a stream, to its first message (the open, not how long it lasted).",
    }),
    livemode: Type.Boolean(),
    created_at: dateTime(),
  },
  { description: "One call of the key's project and environment, kept 30 days: never a body, a header value or a key." },
);
export type RequestLogJson = Static<typeof requestLogSchema>;

const REQUEST_LOG_EXAMPLE: RequestLogJson = {
  id: "req_3kT9vLm2QxW7pRz4NcB8sYd1",
  object: "request_log",
  method: "GET",
  path: "/v1/users/999999999",
  route: "/v1/users/{id}",
  status: 404,
  error_code: "user_not_found",
  idempotency_key: null,
  idempotent_replayed: false,
  api_key_id: "key_5Rt8Wq2Zx7Cv4Bn1Mk9Lp3Hd",
  source: "rest",
  duration_ms: 3,
  livemode: false,
  created_at: CREATED_AT,
};
named("RequestLog", requestLogSchema, [REQUEST_LOG_EXAMPLE]);

export const requestLogListSchema = listOf(requestLogSchema, "Request logs of the key's project and environment.");
named("RequestLogList", requestLogListSchema, [exampleList("/v1/request-logs", [REQUEST_LOG_EXAMPLE])]);

export function requestLogJson(log: RequestLog): RequestLogJson {
  return {
    id: log.id,
    object: "request_log",
    method: log.method,
    path: log.path,
    route: orNull(log.route),
    status: log.status,
    error_code: orNull(log.errorCode),
    idempotency_key: orNull(log.idempotencyKey),
    idempotent_replayed: log.idempotentReplayed,
    api_key_id: orNull(log.apiKeyId),
    source: log.source,
    duration_ms: log.durationMs,
    livemode: log.livemode,
    created_at: requiredIsoTime(log.createdAt),
  };
}
