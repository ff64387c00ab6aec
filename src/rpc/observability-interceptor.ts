// Counts and logs every Connect, gRPC-Web and gRPC call, with the request id the call was answered with.
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";

function protocolOf(contentType: string | null): string {
  if (contentType?.startsWith("application/grpc-web")) return "grpc-web";
  if (contentType?.startsWith("application/grpc")) return "grpc";
  return "connect";
}

function codeName(code: Code): string {
  return Code[code].replace(/[A-Z]/g, (c, i: number) => (i ? "_" : "") + c.toLowerCase());
}

export function observabilityInterceptor(metrics: Metrics, logger: Logger): Interceptor {
  return (next) => async (request) => {
    const started = performance.now();
    const procedure = `${request.service.typeName}/${request.method.name}`;
    const protocol = protocolOf(request.header.get("content-type"));
    const record = (code: string, requestId: string | null) => {
      metrics.rpcCalls.inc({ procedure, code, protocol });
      logger.info({ request_id: requestId ?? undefined, procedure, protocol, code, duration_ms: Math.round(performance.now() - started) }, "rpc call");
    };
    try {
      const response = await next(request);
      record("ok", response.header.get("x-request-id"));
      return response;
    } catch (error) {
      const connectError = ConnectError.from(error);
      record(codeName(connectError.code), connectError.metadata.get("x-request-id"));
      throw error;
    }
  };
}
