// Connect, gRPC-Web and gRPC calls of the public services pass the same gate as REST: key, version, rate
// limit; mutating methods honour the `idempotency-key` header, storing the response message for replay.
import { create, fromBinary, toBinary, type DescMessage, type Message } from "@bufbuild/protobuf";
import { ConnectError, type Interceptor, type UnaryRequest, type UnaryResponse } from "@connectrpc/connect";
import { describeError, svcError } from "../domain/errors.ts";
import { identityHeaders, rateLimitHeaders, REQUEST_ID_HEADER } from "../pipeline/response-headers.ts";
import { isMutatingMethod } from "../api/rest-route-table.ts";
import { IdempotencyGuard } from "../access/idempotency-guard.ts";
import { principalKey } from "../access/principal.ts";
import type { RequestGate } from "../access/request-gate.ts";
import type { RateLimitStatus } from "../access/rate-limiter.ts";
import { clientAddressKey } from "./client-address.ts";
import { newRequestId } from "../domain/ids.ts";

interface StoredRpcResponse {
  /** base64 of the response message, or the error to throw again. */
  message?: string;
  error?: { code: string; message: string; param?: string; metadata: Record<string, string> };
}

function withHeaders(error: unknown, headers: Record<string, string>): ConnectError {
  // Anything but a ConnectError is a failure inside (database, bug): its message must not reach the caller.
  const connectError = error instanceof ConnectError ? error : svcError("internal_error");
  for (const [name, value] of Object.entries(headers)) connectError.metadata.set(name, value);
  return connectError;
}

/**
 * A replay never reaches the handler, so it lacks the headers the protocol handler put on the handler's
 * response (content type; for gRPC and gRPC-Web the `grpc-status` trailer). Connect replaces those with the
 * headers answered here, so they are set again from the request's content type.
 */
function replayedResponse(request: UnaryRequest, message: Message, headers: Record<string, string>): UnaryResponse {
  const requestType = request.header.get("content-type") ?? "";
  const codec = requestType.includes("json") ? "json" : "proto";
  const header = new Headers({ ...headers, "idempotent-replayed": "true" });
  const trailer = new Headers();
  if (requestType.startsWith("application/grpc")) {
    header.set("content-type", `${requestType.startsWith("application/grpc-web") ? "application/grpc-web" : "application/grpc"}+${codec}`);
    trailer.set("grpc-status", "0");
  } else {
    header.set("content-type", `application/${codec}`);
  }
  return { stream: false, service: request.service, method: request.method, header, trailer, message } as UnaryResponse;
}

/** `onInternalError` hears of failures that are not the service's own errors; callers get internal_error. */
export function publicInterceptor(gate: RequestGate, idempotency: IdempotencyGuard, onInternalError: (error: unknown) => void = () => {}): Interceptor {
  const fail = (error: unknown, headers: Record<string, string>): ConnectError => {
    if (!(error instanceof ConnectError)) onInternalError(error);
    return withHeaders(error, headers);
  };
  return (next) => async (request) => {
    if (request.stream) throw svcError("route_not_found", "Streaming methods are not served.");
    const requestId = newRequestId();
    let admission;
    try {
      admission = await gate.admit({
        authorization: request.header.get("authorization"),
        version: request.header.get("svc-version"),
        clientAddress: request.contextValues.get(clientAddressKey),
      });
    } catch (error) {
      throw fail(error, { ...identityHeaders(requestId), ...rateLimitHeaders(gate.uncounted()) });
    }
    const headers = { ...identityHeaders(requestId), ...rateLimitHeaders(admission.rateLimit) };
    const retryAfter = (status: RateLimitStatus) => ({ "retry-after": String(status.resetSeconds) });
    if (admission.error) {
      const extra = describeError(admission.error).code === "rate_limit_exceeded" ? retryAfter(admission.rateLimit) : {};
      throw withHeaders(admission.error, { ...headers, ...extra });
    }
    const principal = admission.principal!;
    request.contextValues.set(principalKey, principal);

    const key = request.header.get("idempotency-key");
    if (key === null || !isMutatingMethod(request.method)) {
      try {
        const response = await next(request);
        for (const [name, value] of Object.entries(headers)) response.header.set(name, value);
        return response;
      } catch (error) {
        throw fail(error, headers);
      }
    }

    const output: DescMessage = request.method.output;
    let claim;
    try {
      const fingerprint = IdempotencyGuard.fingerprint(request.method.parent.typeName, request.method.name, toBinary(request.method.input, request.message));
      claim = await idempotency.claim(principal, "rpc", key, fingerprint);
    } catch (error) {
      throw fail(error, headers);
    }
    if (claim.replay) {
      const stored = claim.replay.body as StoredRpcResponse;
      // The same spelling as identityHeaders', so the original id replaces the new one instead of joining it.
      const replayHeaders = { ...headers, [REQUEST_ID_HEADER]: claim.replay.request_id, "idempotent-replayed": "true" };
      if (stored.error) {
        const { code, message, param, metadata } = stored.error;
        throw withHeaders(svcError(code as never, message, { ...(param !== undefined ? { param } : {}), metadata }), replayHeaders);
      }
      return replayedResponse(request, fromBinary(output, Buffer.from(stored.message ?? "", "base64")), replayHeaders);
    }
    try {
      const response = await next(request);
      const message = response.message as Message;
      await idempotency.settle(claim.recordId, {
        status: 200,
        body: { message: Buffer.from(toBinary(output, create(output, message as never))).toString("base64") } satisfies StoredRpcResponse,
        request_id: requestId,
      });
      for (const [name, value] of Object.entries(headers)) response.header.set(name, value);
      return response;
    } catch (error) {
      const described = describeError(error);
      await idempotency.settle(claim.recordId, {
        status: described.definition.status,
        body: {
          error: { code: described.code, message: described.message, ...(described.param !== undefined ? { param: described.param } : {}), metadata: described.metadata },
        } satisfies StoredRpcResponse,
        request_id: requestId,
      });
      throw fail(error, headers);
    }
  };
}
