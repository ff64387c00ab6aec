// Schemas and parameters of the request log (docs/contract.md, Request logs).
import { ERROR_CATALOGUE } from "../../domain/errors.ts";
import { REQUEST_LOG_ID_PATTERN, REQUEST_LOG_METHODS, REQUEST_LOG_SOURCES } from "../../domain/request-logs.ts";
import { closedObject, DATE_TIME, listOf, nullable, type JsonSchema } from "./json-schema.ts";

export const REQUEST_LOG_PATH_IDENTIFIER = {
  schema: {
    type: "string",
    pattern: REQUEST_LOG_ID_PATTERN.source,
    description: "A request id (the `X-Request-Id` of an answer); any other value is 404 request_log_not_found.",
  },
  notFound: "request_log_not_found",
} as const;

export const requestLogSchemas: Record<string, JsonSchema> = {
  RequestLog: closedObject(
    {
      id: { type: "string", pattern: REQUEST_LOG_ID_PATTERN.source, description: "The request id: the `X-Request-Id` of the answer." },
      object: { const: "request_log" },
      method: { type: "string", enum: [...REQUEST_LOG_METHODS], description: "The HTTP verb of a REST call; `RPC` for the other doors." },
      path: { type: "string", description: "The REST path without its query, or `/package.Service/Method`." },
      route: nullable({
        type: "string",
        description: "The route template (`/v1/users/{id}`) or `/package.Service/Method`; null when no route matched.",
      }),
      status: { type: "integer", minimum: 100, maximum: 599, description: "The HTTP status; for RPC doors, that of the same answer over REST." },
      error_code: nullable({ type: "string", enum: Object.keys(ERROR_CATALOGUE) }),
      idempotency_key: nullable({ type: "string" }),
      idempotent_replayed: { type: "boolean" },
      api_key_id: nullable({ type: "string" }),
      source: { type: "string", enum: [...REQUEST_LOG_SOURCES] },
      duration_ms: { type: "integer", minimum: 0 },
      livemode: { type: "boolean" },
      created_at: DATE_TIME,
    },
    { description: "One call of the key's project and environment, kept 30 days: never a body, a header value or a key." },
  ),
  RequestLogList: listOf("RequestLog", "Request logs of the key's project and environment."),
};

const filter = (name: string, description: string, schema: JsonSchema, example?: string): JsonSchema => ({
  name,
  in: "query",
  required: false,
  description,
  schema,
  ...(example !== undefined ? { example } : {}),
});

export const requestLogParameterComponents: Record<string, JsonSchema> = {
  RequestLogStatusFilter: filter(
    "status",
    "Only calls answered with this HTTP status, or a class of statuses (`2xx`, `4xx`, `5xx`).",
    { type: "string", pattern: "^([1-5][0-9]{2}|[1-5][xX][xX])$" },
    "4xx",
  ),
  RequestLogErrorCodeFilter: filter("error_code", "Only calls refused with this error code.", { type: "string", enum: Object.keys(ERROR_CATALOGUE) }),
  RequestLogMethodFilter: filter("method", "Only calls of this method.", { type: "string", enum: [...REQUEST_LOG_METHODS] }),
  RequestLogRouteFilter: filter("route", "Only calls of this route template.", { type: "string", pattern: "^/" }, "/v1/users/{id}"),
  RequestLogSourceFilter: filter("source", "Only calls through this door.", { type: "string", enum: [...REQUEST_LOG_SOURCES] }),
  RequestLogIdempotencyKeyFilter: filter("idempotency_key", "Only calls with this Idempotency-Key.", { type: "string" }),
};

export const REQUEST_LOG_QUERY_PARAMETERS: Record<string, Record<string, string>> = {
  "GET /v1/request-logs": {
    status: "RequestLogStatusFilter",
    error_code: "RequestLogErrorCodeFilter",
    method: "RequestLogMethodFilter",
    route: "RequestLogRouteFilter",
    source: "RequestLogSourceFilter",
    idempotency_key: "RequestLogIdempotencyKeyFilter",
  },
};
