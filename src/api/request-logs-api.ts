// The REST surface of svc.v1.RequestLogsService.
import { RequestLogsService } from "../../gen/svc/v1/request_logs_pb.ts";
import { jsonList } from "../representations/json-values.ts";
import { requestLogJson, requestLogListSchema, requestLogSchema } from "../representations/request-logs.ts";
import { describeService } from "./method-description.ts";

const TAG = "Request logs";

export const requestLogsApi = describeService(RequestLogsService, {
  listRequestLogs: {
    status: 200,
    present: (r, path) => jsonList(path, r.data.map(requestLogJson), r.hasMore),
    operation: {
      summary: "List request logs",
      description:
        "The calls of the key's project and environment of the last 30 days through every door (REST, Connect, gRPC, the dashboard), " +
        "newest first, filtered by `status` (`404` or `4xx`), `error_code`, `method`, `route`, `source`, `idempotency_key` and `created`.",
      tag: TAG,
      success: { schema: requestLogListSchema, description: "Request logs, newest first." },
    },
  },
  getRequestLog: {
    status: 200,
    present: (r) => requestLogJson(r.requestLog!),
    operation: {
      summary: "Retrieve a request log",
      description: "The log of one call, by its request id: the `X-Request-Id` of its answer (also of a refusal).",
      tag: TAG,
      success: { schema: requestLogSchema, description: "The request log." },
    },
  },
});
