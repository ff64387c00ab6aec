// Request logs as the public message.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { RequestLogSchema, type RequestLog } from "../../gen/svc/v1/request_logs_pb.ts";
import type { RequestLogDocument } from "../store/request-log-repository.ts";

export function requestLogMessage(doc: RequestLogDocument): RequestLog {
  return create(RequestLogSchema, {
    id: doc._id,
    method: doc.method,
    path: doc.path,
    ...(doc.route !== null ? { route: doc.route } : {}),
    status: doc.status,
    ...(doc.error_code !== null ? { errorCode: doc.error_code } : {}),
    ...(doc.idempotency_key !== null ? { idempotencyKey: doc.idempotency_key } : {}),
    idempotentReplayed: doc.idempotent_replayed,
    ...(doc.api_key_id !== null ? { apiKeyId: doc.api_key_id } : {}),
    source: doc.source,
    durationMs: doc.duration_ms,
    livemode: doc.livemode,
    createdAt: timestampFromDate(doc.created_at),
  });
}
