// Connect, gRPC-Web and gRPC calls of the public services: a thin adapter from the RPC request to the call
// pipeline (the same steps as REST), storing and replaying the response message for idempotent calls.
import { create, fromBinary, toBinary, type Message } from "@bufbuild/protobuf";
import { createHandlerContext, type Interceptor, type UnaryRequest, type UnaryResponse } from "@connectrpc/connect";
import { creationReservationKey } from "../access/creation-reservation.ts";
import { principalKey } from "../access/principal.ts";
import { describedMethod } from "../api/public-api.ts";
import type { ServiceRegistry } from "../api/service-registry.ts";
import { svcError } from "../domain/errors.ts";
import { CallFailure, type CallPipeline } from "../pipeline/call-pipeline.ts";
import { checkMessageText } from "./message-text.ts";
import { clientAddressKey, requestIdKey } from "./request-id.ts";

interface StoredRpcAnswer {
  /** base64 of the response message, or the error to throw again. */
  message?: string;
  error?: { code: string; message: string; param?: string; metadata: Record<string, string> };
}

/**
 * A replay never reaches the handler, so it lacks the headers the protocol handler put on the handler's
 * response (content type; for gRPC and gRPC-Web the `grpc-status` trailer). Connect replaces those with the
 * headers answered here, so they are set again from the request's content type.
 */
function replayedResponse(request: UnaryRequest, message: Message): UnaryResponse {
  const requestType = request.header.get("content-type") ?? "";
  const codec = requestType.includes("json") ? "json" : "proto";
  const header = new Headers();
  const trailer = new Headers();
  if (requestType.startsWith("application/grpc")) {
    header.set("content-type", `${requestType.startsWith("application/grpc-web") ? "application/grpc-web" : "application/grpc"}+${codec}`);
    trailer.set("grpc-status", "0");
  } else {
    header.set("content-type", `application/${codec}`);
  }
  return { stream: false, service: request.service, method: request.method, header, trailer, message } as UnaryResponse;
}

function withHeaders(headers: Headers, values: Record<string, string>): void {
  for (const [name, value] of Object.entries(values)) headers.set(name, value);
}

/** The context a service sees, for work done outside its methods (bringing a replay up to date). */
function handlerContextOf(request: UnaryRequest) {
  return createHandlerContext({
    service: request.service,
    method: request.method,
    protocolName: "rpc",
    requestMethod: request.requestMethod,
    url: request.url,
    requestHeader: request.header,
    contextValues: request.contextValues,
  });
}

export function publicInterceptor(pipeline: CallPipeline, registry: ServiceRegistry): Interceptor {
  return (next) => async (request) => {
    if (request.stream) throw svcError("route_not_found", "Streaming methods are not served.");
    const call = pipeline.newCall({
      requestId: request.contextValues.get(requestIdKey),
      transport: "rpc",
      method: request.method,
      authorization: request.header.get("authorization"),
      version: request.header.get("svc-version"),
      clientAddress: request.contextValues.get(clientAddressKey),
      idempotencyKey: request.header.get("idempotency-key"),
      takesIdempotencyKey: describedMethod(request.method)?.takesIdempotencyKey ?? true,
    });
    const output = request.method.output;
    try {
      const response = await pipeline.run<UnaryResponse>(call, {
        prepare: () => [request.method.parent.typeName, request.method.name, toBinary(request.method.input, request.message)],
        execute: async (principal, reservation) => {
          // The REST decoder applies the same rule to the JSON it decodes.
          checkMessageText(request.method.input, request.message);
          request.contextValues.set(principalKey, principal).set(creationReservationKey, reservation);
          return (await next(request)) as UnaryResponse;
        },
        store: (response) => ({
          status: 200,
          body: {
            message: Buffer.from(toBinary(output, create(output, response.message as never))).toString("base64"),
          } satisfies StoredRpcAnswer,
        }),
        storeError: (error) => ({
          status: error.definition.status,
          body: {
            error: {
              code: error.code,
              message: error.message,
              ...(error.param !== undefined ? { param: error.param } : {}),
              metadata: error.metadata,
            },
          } satisfies StoredRpcAnswer,
        }),
        replay: async (stored, principal) => {
          const answer = stored.body as StoredRpcAnswer;
          if (answer.error) {
            const { code, message, param, metadata } = answer.error;
            throw svcError(code as never, message, { ...(param !== undefined ? { param } : {}), metadata });
          }
          request.contextValues.set(principalKey, principal);
          const storedMessage = fromBinary(output, Buffer.from(answer.message ?? "", "base64"));
          return replayedResponse(request, await registry.refreshReplay(request.method, storedMessage, handlerContextOf(request)));
        },
      });
      withHeaders(response.header, call.headers);
      return response;
    } catch (error) {
      if (!(error instanceof CallFailure)) throw error;
      withHeaders(error.error.metadata, error.headers);
      throw error.error;
    }
  };
}
