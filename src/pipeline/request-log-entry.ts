// What the request log keeps of one call (docs/contract.md, Request logs): where it came in, what it named, how
// it was answered and by which key; never a body, a header value other than the Idempotency-Key, or a key.
import type { DescMethod } from "@bufbuild/protobuf";
import { IDEMPOTENCY_KEY_PATTERN } from "../access/idempotency-guard.ts";
import type { Principal } from "../access/principal.ts";
import type { RequestLogSource } from "../domain/request-logs.ts";
import type { RequestLogDocument } from "../store/request-log-repository.ts";

/** Where the log's entries go: RequestLogWriter, which batches them off the call's path. */
export interface RequestLogSink {
  record(log: RequestLogDocument): void;
}

/**
 * How the log names a call that is not simply `RPC /package.Service/Method`: a REST call's verb, path, route
 * template and success status (or an RPC path no method has, without a template).
 */
export interface CallRoute {
  verb: string;
  path: string;
  /** null: no route matched the path. */
  template: string | null;
  successStatus: number;
}

/** A call as the log sees it, whichever way it ended. */
export interface LoggedCall {
  logId: string;
  source: RequestLogSource;
  method: DescMethod | null;
  route: CallRoute | undefined;
  principal: Principal;
  idempotencyKey: string | null | undefined;
  replayed: boolean;
  /** The HTTP status and error code of a refusal; null for a success. */
  refusal: { status: number; code: string } | null;
  durationMs: number;
  createdAt: Date;
}

/** `/package.Service/Method`, the path and route of a call through any door but REST. */
function procedurePath(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}

export function requestLogEntry(call: LoggedCall): RequestLogDocument {
  const procedure = call.method ? procedurePath(call.method) : "";
  const key = call.idempotencyKey;
  return {
    _id: call.logId,
    project_id: call.principal.projectId,
    livemode: call.principal.livemode,
    method: call.route?.verb ?? "RPC",
    path: call.route?.path ?? procedure,
    route: call.route ? call.route.template : procedure,
    status: call.refusal?.status ?? call.route?.successStatus ?? 200,
    error_code: call.refusal?.code ?? null,
    // A key the contract refuses (idempotency_key_invalid) is not kept: it may be anything a header can hold.
    idempotency_key: key != null && IDEMPOTENCY_KEY_PATTERN.test(key) ? key : null,
    idempotent_replayed: call.replayed,
    api_key_id: call.principal.apiKeyId,
    source: call.source,
    duration_ms: Math.max(0, Math.round(call.durationMs)),
    created_at: call.createdAt,
  };
}
