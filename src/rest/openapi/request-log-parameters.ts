// Parameters of the request log's routes (docs/contract.md, Request logs): its id in a path, its list's filters.
import { ERROR_CATALOGUE } from "../../domain/errors.ts";
import { REQUEST_LOG_ID_PATTERN, REQUEST_LOG_METHODS, REQUEST_LOG_SOURCES } from "../../domain/request-logs.ts";
import type { JsonSchema } from "../../representations/json-schema.ts";

export const REQUEST_LOG_PATH_IDENTIFIER = {
  schema: {
    type: "string",
    pattern: REQUEST_LOG_ID_PATTERN.source,
    description: "A request id (the `X-Request-Id` of an answer); any other value is 404 request_log_not_found.",
  },
  notFound: "request_log_not_found",
} as const;

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
