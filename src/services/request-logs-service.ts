// svc.v1.RequestLogsService: the request log of the caller's project and environment, newest first.
import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  GetRequestLogResponseSchema,
  ListRequestLogsResponseSchema,
  type GetRequestLogRequest,
  type ListRequestLogsRequest,
  type RequestLogsService,
  type TailRequestLogsRequest,
  type TailRequestLogsResponse,
  TailRequestLogsResponseSchema,
} from "../../gen/svc/v1/request_logs_pb.ts";
import { tenantOf } from "../access/principal.ts";
import { isErrorCode, svcError, validationError } from "../domain/errors.ts";
import { isRequestLogMethod, isRequestLogSource, REQUEST_LOG_METHODS, REQUEST_LOG_SOURCES, statusFilter } from "../domain/request-logs.ts";
import { requestLogMessage } from "../messages/request-log-messages.ts";
import type { RequestLogFilters, RequestLogRepository } from "../store/request-log-repository.ts";
import type { LiveRequestLogs } from "./live-request-logs.ts";
import { listParameters, listWindow } from "./pagination.ts";

/** The filters of a list or tail request, each checked (422 naming it) in the order of the request's fields. */
function requestLogFilters(request: ListRequestLogsRequest | TailRequestLogsRequest): RequestLogFilters {
  const filters: RequestLogFilters = {};
  if (request.status !== undefined) filters.status = statusFilter(request.status);
  if (request.errorCode !== undefined) {
    if (!isErrorCode(request.errorCode)) throw validationError("error_code", "error_code must be an error code of the API.");
    filters.error_code = request.errorCode;
  }
  if (request.method !== undefined) {
    if (!isRequestLogMethod(request.method)) throw validationError("method", `method must be one of ${REQUEST_LOG_METHODS.join(", ")}.`);
    filters.method = request.method;
  }
  if (request.route !== undefined) {
    if (!request.route.startsWith("/")) throw validationError("route", "route must be a route template starting with /.");
    filters.route = request.route;
  }
  if (request.source !== undefined) {
    if (!isRequestLogSource(request.source)) throw validationError("source", `source must be one of ${REQUEST_LOG_SOURCES.join(", ")}.`);
    filters.source = request.source;
  }
  if (request.idempotencyKey !== undefined) filters.idempotency_key = request.idempotencyKey;
  return filters;
}

export class RequestLogsServiceImpl implements ServiceImpl<typeof RequestLogsService> {
  constructor(
    private readonly logs: RequestLogRepository,
    private readonly live: LiveRequestLogs,
  ) {}

  async listRequestLogs(request: ListRequestLogsRequest, context: HandlerContext) {
    const scope = tenantOf(context);
    const parameters = listParameters(request);
    const filters = requestLogFilters(request);
    const window = await listWindow(parameters, (id) => this.logs.find(scope, id));
    const page = await this.logs.list(scope, window, filters);
    return create(ListRequestLogsResponseSchema, { data: page.items.map(requestLogMessage), hasMore: page.hasMore });
  }

  async getRequestLog(request: GetRequestLogRequest, context: HandlerContext) {
    const log = await this.logs.find(tenantOf(context), request.id);
    if (!log) throw svcError("request_log_not_found");
    return create(GetRequestLogResponseSchema, { requestLog: requestLogMessage(log) });
  }

  /**
   * The entries written from the stream's open on (no history: ListRequestLogs has it), as the writer's batches
   * land, a fraction of a second after their calls, after one `caught_up` message that says the tail is
   * subscribed. Filters are checked before the stream opens.
   */
  async *tailRequestLogs(request: TailRequestLogsRequest, context: HandlerContext): AsyncGenerator<TailRequestLogsResponse> {
    const filters = requestLogFilters(request);
    const subscription = await this.live.subscribe(tenantOf(context), filters);
    const close = () => subscription.close();
    context.signal.addEventListener("abort", close, { once: true });
    try {
      yield create(TailRequestLogsResponseSchema, { caughtUp: true });
      for await (const log of subscription) yield create(TailRequestLogsResponseSchema, { requestLog: requestLogMessage(log) });
    } finally {
      context.signal.removeEventListener("abort", close);
      subscription.close();
    }
  }
}
