// The outermost interceptor of every Connect, gRPC-Web and gRPC call: it puts the call's request id on the
// response (headers, and for gRPC the trailers too; an error's metadata), then counts and logs the call with it.
// Calls refused before any interceptor runs are recorded by the server with `earlyFailureRecorder`.
import { Code, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import { REQUEST_ID_HEADER } from "../pipeline/response-headers.ts";
import { connectErrorOf } from "../pipeline/connect-errors.ts";
import { requestIdKey } from "./request-id.ts";

/** The RPC protocol of a call, by its content type, as metrics and logs name it. */
export function rpcProtocolOf(contentType: string | null | undefined): string {
  if (contentType?.startsWith("application/grpc-web")) return "grpc-web";
  if (contentType?.startsWith("application/grpc")) return "grpc";
  return "connect";
}

/** A Connect code as metrics and logs name it (`not_found`). */
export function codeName(code: Code): string {
  return Code[code].replace(/[A-Z]/g, (c, i: number) => (i ? "_" : "") + c.toLowerCase());
}

export function observabilityInterceptor(metrics: Metrics, logger: Logger): Interceptor {
  return (next) => async (request) => {
    const started = performance.now();
    const requestId = request.contextValues.get(requestIdKey);
    const procedure = `${request.service.typeName}/${request.method.name}`;
    const protocol = rpcProtocolOf(request.header.get("content-type"));
    const record = (code: string) => {
      metrics.rpcCalls.inc({ procedure, code, protocol });
      logger.info({ request_id: requestId, procedure, protocol, code, duration_ms: Math.round(performance.now() - started) }, "rpc call");
    };
    try {
      const response = await next(request);
      // A replay answers with its original request id; every other answer with this call's.
      const answered = response.header.get(REQUEST_ID_HEADER) ?? requestId;
      response.header.set(REQUEST_ID_HEADER, answered);
      if (protocol !== "connect") response.trailer.set(REQUEST_ID_HEADER, answered);
      record("ok");
      return response;
    } catch (error) {
      const connectError = connectErrorOf(error);
      if (!connectError.metadata.has(REQUEST_ID_HEADER)) connectError.metadata.set(REQUEST_ID_HEADER, requestId);
      record(codeName(connectError.code));
      throw connectError;
    }
  };
}

/** A call refused before its interceptors ran (unknown method, undecodable message): counted and logged alike. */
export function earlyFailureRecorder(metrics: Metrics, logger: Logger) {
  return (failure: { requestId: string; procedure: string; served: boolean; protocol: string; code: Code; durationMs: number }): void => {
    const code = codeName(failure.code);
    const { requestId, procedure, protocol } = failure;
    // Paths no service has are counted under one label: a client must not be able to add series at will.
    metrics.rpcCalls.inc({ procedure: failure.served ? procedure : "unknown", code, protocol });
    logger.info({ request_id: requestId, procedure, protocol, code, duration_ms: Math.round(failure.durationMs) }, "rpc call");
  };
}
