// Unary gRPC calls (binary messages, no compression) straight over an HTTP/2 stream: read the one enveloped
// message, decode it, run the method through the same interceptors as every other transport (request id and
// logs, the call pipeline, the admin token), answer the message with `grpc-status` in the trailers, or a
// trailers-only error. Connect's handler runs every call, unary or not, as a chain of async iterables with an
// AbortSignal, a timer and a DOMException each; this path has none of them, which is what made gRPC about as
// fast as REST for the same read (bench/results/grpc-vs-rest.md). Everything else (streaming methods, JSON
// messages, the Connect and gRPC-Web protocols) goes to Connect's own handler.
import type { ServerHttp2Stream } from "node:http2";
import { fromBinary, toBinary, type DescMethod, type DescService, type Message } from "@bufbuild/protobuf";
import { Code, ConnectError, type ContextValues, type HandlerContext, type Interceptor, type MethodImplSpec } from "@connectrpc/connect";
import { invokeUnaryImplementation } from "@connectrpc/connect/protocol";
import { parseTimeout, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { MAX_BODY_BYTES } from "../domain/limits.ts";
import { svcError } from "../domain/errors.ts";
import { REQUEST_ID_HEADER } from "../pipeline/response-headers.ts";
import { connectErrorOf } from "../pipeline/connect-errors.ts";
import { encodeGrpcMessage } from "./grpc-message.ts";

export interface UnaryRoute {
  spec: Extract<MethodImplSpec, { kind: "unary" }>;
  interceptors: Interceptor[];
}

/** What the handler tells of a call that failed before its interceptors ran (they log the others). */
export interface EarlyFailure {
  requestId: string;
  procedure: string;
  /** Whether a service here has this method. */
  served: boolean;
  code: Code;
  durationMs: number;
}

export interface GrpcUnaryOptions {
  /** Aborted when the server's grace period ends: calls still running see it in their context's signal. */
  shutdownSignal: AbortSignal;
  onEarlyFailure: (failure: EarlyFailure) => void;
}

/** The content types this path answers; `application/grpc+json` and the rest go to Connect's handler. */
export function isBinaryGrpc(contentType: string | undefined): boolean {
  return contentType === "application/grpc" || contentType === "application/grpc+proto";
}

/** Whether the request asks for a compression this path does not do (Connect's handler answers it). */
export function asksForCompression(encoding: string | undefined): boolean {
  return encoding !== undefined && encoding !== "identity";
}

function requestHeadersOf(headers: Record<string, string | string[] | undefined>): Headers {
  const result = new Headers();
  for (const name in headers) {
    if (name.charCodeAt(0) === 58 /* ":" */) continue;
    const value = headers[name];
    if (value === undefined) continue;
    if (typeof value === "string") result.append(name, value);
    else for (const item of value) result.append(name, item);
  }
  return result;
}

function outgoingHeaders(source: Headers, target: Record<string, string | string[]>): void {
  source.forEach((value, name) => {
    target[name] = name === "grpc-message" ? encodeGrpcMessage(decodeURIComponentSafe(value)) : value;
  });
}

function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function envelope(message: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(5 + message.byteLength);
  frame[0] = 0;
  frame.writeUInt32BE(message.byteLength, 1);
  frame.set(message, 5);
  return frame;
}

/** The one message of a unary request body, or the protocol error to answer. */
function unwrap(body: Buffer): Uint8Array {
  if (body.byteLength === 0) throw new ConnectError("protocol error: missing input message for unary method", Code.Unimplemented);
  if (body.byteLength < 5) throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
  if ((body[0]! & 0b1) !== 0) throw new ConnectError("protocol error: received a compressed message without grpc-encoding", Code.Internal);
  const length = body.readUInt32BE(1);
  if (5 + length < body.byteLength) throw new ConnectError("protocol error: received extra input message for unary method", Code.Unimplemented);
  if (5 + length > body.byteLength) throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
  return body.subarray(5);
}

/** Reads the whole request body, at most MAX_BODY_BYTES (a larger one is refused before the call runs). */
function readBody(stream: ServerHttp2Stream, declaredLength: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (declaredLength > MAX_BODY_BYTES) return reject(tooLarge());
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.byteLength;
      if (received > MAX_BODY_BYTES) {
        stream.off("data", onData);
        stream.resume();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    // Every stream closes, most after their body was read: the error is only made for one that closed before.
    let ended = false;
    stream.on("data", onData);
    stream.once("end", () => {
      ended = true;
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
    });
    stream.once("error", reject);
    stream.once("close", () => {
      if (!ended) reject(new ConnectError("the stream was closed", Code.Canceled));
    });
  });
}

/** The refusal of a body over the limit, while reading it. */
export function tooLarge(): ConnectError {
  return connectErrorOf(svcError("payload_too_large", `The request body exceeds the maximum of ${MAX_BODY_BYTES / 1024} KiB.`));
}

function contextOf(
  method: DescMethod,
  service: DescService,
  path: string,
  requestHeader: Headers,
  values: ContextValues,
  timeoutMs: number | undefined,
  signal: AbortSignal,
): HandlerContext {
  const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
  return {
    method,
    service,
    requestMethod: "POST",
    protocolName: "grpc",
    url: path,
    signal,
    timeoutMs: () => (deadline === undefined ? undefined : deadline - Date.now()),
    requestHeader,
    responseHeader: new Headers({ "content-type": "application/grpc" }),
    responseTrailer: new Headers(),
    values,
  };
}

/** Answers an error without a body: the status in the headers (a trailers-only response). */
function respondTrailersOnly(stream: ServerHttp2Stream, error: ConnectError, extra: Headers | undefined, requestId: string): void {
  if (stream.destroyed || stream.headersSent) return;
  const headers: Record<string, string | string[]> = { ":status": 200, "content-type": "application/grpc" } as never;
  const status = setTrailerStatus(extra ?? new Headers(), error);
  if (!status.has(REQUEST_ID_HEADER)) status.set(REQUEST_ID_HEADER, requestId);
  outgoingHeaders(status, headers);
  stream.respond(headers, { endStream: true });
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
  options: GrpcUnaryOptions,
): Promise<void> {
  const started = performance.now();
  const { spec } = route;
  let input: Message;
  let context: HandlerContext;
  try {
    const body = await readBody(stream, Number(headers["content-length"] ?? -1));
    const timeout = parseTimeout((headers["grpc-timeout"] as string | undefined) ?? null, Number.MAX_SAFE_INTEGER);
    if (timeout.error) throw timeout.error;
    try {
      input = fromBinary(spec.method.input, unwrap(body));
    } catch (error) {
      throw error instanceof ConnectError ? error : new ConnectError(`parse binary: ${(error as Error).message}`, Code.InvalidArgument);
    }
    const signal =
      timeout.timeoutMs === undefined ? options.shutdownSignal : AbortSignal.any([options.shutdownSignal, AbortSignal.timeout(timeout.timeoutMs)]);
    context = contextOf(spec.method, spec.method.parent, path, requestHeadersOf(headers), values, timeout.timeoutMs, signal);
  } catch (error) {
    const failure = connectErrorOf(error);
    options.onEarlyFailure({ requestId, procedure: path.slice(1), served: true, code: failure.code, durationMs: performance.now() - started });
    respondTrailersOnly(stream, failure, undefined, requestId);
    return;
  }
  try {
    const output = await invokeUnaryImplementation(spec, context as never, input, route.interceptors);
    if (stream.destroyed) return;
    const responseHeaders: Record<string, string | string[]> = { ":status": 200 } as never;
    outgoingHeaders(context.responseHeader, responseHeaders);
    const trailers: Record<string, string | string[]> = { "grpc-status": "0" };
    outgoingHeaders(context.responseTrailer, trailers);
    stream.respond(responseHeaders, { waitForTrailers: true });
    stream.once("wantTrailers", () => stream.sendTrailers(trailers));
    stream.end(envelope(toBinary(spec.method.output, output)));
  } catch (error) {
    // The interceptors have put the request id and every header of the answer on the error's metadata.
    const failure = error instanceof ConnectError ? error : new ConnectError("internal error", Code.Internal, undefined, undefined, error);
    const extra = new Headers(context.responseHeader);
    extra.delete("content-type");
    context.responseTrailer.forEach((value, name) => extra.set(name, value));
    respondTrailersOnly(stream, failure, extra, requestId);
  }
}
