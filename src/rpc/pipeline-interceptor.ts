// Connect, gRPC-Web and gRPC calls of the public services and of AdminService: a thin adapter from the RPC
// request to the call pipeline (the same steps as REST and the dashboard), answering a replayed response message
// in the protocol the call came in.
import type { Message } from "@bufbuild/protobuf";
import {
  createHandlerContext,
  type Interceptor,
  type StreamRequest,
  type StreamResponse,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { takesIdempotencyKey } from "../api/idempotent-methods.ts";
import { svcError } from "../domain/errors.ts";
import { type Call, CallFailure, type CallPipeline } from "../pipeline/call-pipeline.ts";
import { connectErrorOf } from "../pipeline/connect-errors.ts";
import { checkMessageText } from "./message-text.ts";
import { clientAddressKey, requestIdKey } from "./request-id.ts";

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

/** A context sharing the request's values (those the pipeline fills), for a replay to be refreshed in. */
function handlerContextOf(request: UnaryRequest | StreamRequest) {
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

/** Which caller an RPC door admits: API keys on the public services; the operator, already checked, on AdminService. */
export type RpcCaller = "api-key" | "admin";

export function pipelineInterceptor(pipeline: CallPipeline, caller: RpcCaller): Interceptor {
  const callOf = (request: UnaryRequest | StreamRequest) =>
    pipeline.newCall({
      requestId: request.contextValues.get(requestIdKey),
      door: (request.header.get("content-type") ?? "").startsWith("application/grpc") ? "grpc" : caller === "admin" ? "admin" : "connect",
      method: request.method,
      caller: caller === "admin" ? { kind: "admin" } : { kind: "bearer", authorization: request.header.get("authorization") },
      version: request.header.get("svc-version"),
      clientAddress: request.contextValues.get(clientAddressKey),
      idempotencyKey: request.header.get("idempotency-key"),
      takesIdempotencyKey: takesIdempotencyKey(request.method),
      values: request.contextValues,
      context: () => handlerContextOf(request),
    });
  return (next) => async (request) => {
    if (request.stream) {
      if (request.method.methodKind !== "server_streaming")
        throw svcError("route_not_found", "Client and bidirectional streaming methods are not served.");
      return serverStream(pipeline, callOf(request), request, next as (request: StreamRequest) => Promise<StreamResponse>);
    }
    const call = callOf(request);
    try {
      const response = await pipeline.run<UnaryResponse>(call, {
        decode: () => ({ message: request.message }),
        execute: async () => {
          // The REST decoder applies the same rule to the JSON it decodes.
          checkMessageText(request.method.input, request.message);
          return (await next(request)) as UnaryResponse;
        },
        answerOf: (response) => response.message,
        replayed: (message) => replayedResponse(request, message),
      });
      withHeaders(response.header, call.headers);
      return response;
    } catch (error) {
      throw asRpcError(error);
    }
  };
}

/**
 * A refusal as the RPC answers it: the service's error in Connect's form, the answer's headers in its metadata
 * (gRPC: trailers). An error a stream throws while its messages flow is past every interceptor: the pipeline throws
 * it in this form (`asTransportError`).
 */
function asRpcError(error: unknown): unknown {
  if (!(error instanceof CallFailure)) return connectErrorOf(error);
  const refusal = connectErrorOf(error.error);
  withHeaders(refusal.metadata, error.headers);
  return refusal;
}

/**
 * A server-streaming call: its one request message is read first (a client streams exactly one), then the
 * pipeline admits the call and opens the method's stream, whose messages flow as the method yields them.
 */
async function serverStream(
  pipeline: CallPipeline,
  call: Call,
  request: StreamRequest,
  next: (request: StreamRequest) => Promise<StreamResponse>,
): Promise<StreamResponse> {
  try {
    const received = await onlyMessage(request.message);
    let response: StreamResponse | undefined;
    const messages = await pipeline.openStream(call, {
      decode: () => ({ message: received }),
      open: async (message) => {
        checkMessageText(request.method.input, message);
        response = await next({ ...request, message: singleMessage(message) });
        return response.message;
      },
      asTransportError: asRpcError,
    });
    withHeaders(response!.header, call.headers);
    return { ...response!, message: messages };
  } catch (error) {
    throw asRpcError(error);
  }
}

async function onlyMessage(messages: AsyncIterable<Message>): Promise<Message> {
  for await (const message of messages) return message;
  throw svcError("validation_error", "The request message is missing.");
}

async function* singleMessage(message: Message): AsyncIterable<Message> {
  yield message;
}
