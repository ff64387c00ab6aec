// Unary gRPC calls (binary messages, no compression) straight over an HTTP/2 stream: read the one enveloped
// message, decode it, run the method through the same interceptors as every other transport (request id and
// logs, the call pipeline, the admin token), answer the message with `grpc-status` in the trailers, or a
// trailers-only error. Connect's handler runs every call, unary or not, as a chain of async iterables with an
// AbortSignal, a timer and a DOMException each; this path has none of them, which is what made gRPC about as
// fast as REST for the same read (bench/results/grpc-vs-rest.md). Server-streaming calls take
// rpc/grpc-server-stream.ts; everything else (JSON messages, compression, the Connect and gRPC-Web protocols)
// goes to Connect's own handler.
import type { ServerHttp2Stream } from "node:http2";
import { toBinary } from "@bufbuild/protobuf";
import type { ContextValues, Interceptor, MethodImplSpec } from "@connectrpc/connect";
import { invokeUnaryImplementation } from "@connectrpc/connect/protocol";
import {
  callError,
  endWithTrailers,
  envelope,
  failureHeaders,
  type GrpcCallOptions,
  okTrailers,
  openCall,
  respondHeaders,
  respondTrailersOnly,
} from "./grpc-call.ts";

export interface UnaryRoute {
  spec: Extract<MethodImplSpec, { kind: "unary" }>;
  interceptors: Interceptor[];
}

/**
 * Runs one unary call whose route is known. `values` carries the call's request id and client address;
 * `requestId` is the same id, for answers made before the interceptors run.
 */
export async function serveUnary(
  stream: ServerHttp2Stream,
  headers: Record<string, string | string[] | undefined>,
  path: string,
  route: UnaryRoute,
  values: ContextValues,
  requestId: string,
  options: GrpcCallOptions,
): Promise<void> {
  const opened = await openCall(stream, headers, path, route.spec.method, values, requestId, options);
  if (opened === null) return;
  const { input, context } = opened;
  try {
    const output = await invokeUnaryImplementation(route.spec, context as never, input, route.interceptors);
    if (stream.destroyed) return;
    respondHeaders(stream, context);
    endWithTrailers(stream, okTrailers(context), envelope(toBinary(route.spec.method.output, output)));
  } catch (error) {
    // The interceptors have put the request id and every header of the answer on the error's metadata.
    respondTrailersOnly(stream, callError(error), failureHeaders(context), requestId);
  }
}
