// The RequestLog object (docs/contract.md, Request log): every field present, the unset ones null.
import type { RequestLog } from "../../gen/svc/v1/request_logs_pb.ts";
import { orNull, requiredIsoTime } from "./json-values.ts";

export interface RequestLogJson {
  id: string;
  object: "request_log";
  method: string;
  path: string;
  route: string | null;
  status: number;
  error_code: string | null;
  idempotency_key: string | null;
  idempotent_replayed: boolean;
  api_key_id: string | null;
  source: string;
  duration_ms: number;
  livemode: boolean;
  created_at: string;
}

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
