// What every binary gRPC call served straight over its HTTP/2 stream shares (rpc/grpc-unary.ts,
// rpc/grpc-server-stream.ts): which requests this path takes, the request message read from its envelope,
// the handler context the interceptors see, and the answers made before or without a message.
import type { ServerHttp2Stream } from "node:http2";
import { fromBinary, type DescMethod, type DescService, type Message } from "@bufbuild/protobuf";
import { Code, ConnectError, type ContextValues, type HandlerContext } from "@connectrpc/connect";
import { parseTimeout, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { MAX_BODY_BYTES } from "../domain/limits.ts";
import { svcError } from "../domain/errors.ts";
import { REQUEST_ID_HEADER } from "../pipeline/response-headers.ts";
import { connectErrorOf } from "../pipeline/connect-errors.ts";
import { encodeGrpcMessage } from "./grpc-message.ts";

/** What the handler tells of a call that failed before its interceptors ran (they log the others). */
export interface EarlyFailure {
  requestId: string;
  procedure: string;
  /** Whether a service here has this method. */
  served: boolean;
  code: Code;
  durationMs: number;
}

export interface GrpcCallOptions {
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

export function envelope(message: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(5 + message.byteLength);
  frame[0] = 0;
  frame.writeUInt32BE(message.byteLength, 1);
  frame.set(message, 5);
  return frame;
}

/** The kinds of method this path serves, as Connect names them in its protocol errors. */
type CallKind = "unary" | "server-streaming";

/** The one message of a request body, or the protocol error to answer (Connect's words). */
function unwrap(body: Buffer, kind: CallKind): Uint8Array {
  if (body.byteLength === 0) throw new ConnectError(`protocol error: missing input message for ${kind} method`, Code.Unimplemented);
  if (body.byteLength < 5) throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
  if ((body[0]! & 0b1) !== 0) throw new ConnectError("protocol error: received a compressed message without grpc-encoding", Code.Internal);
  const length = body.readUInt32BE(1);
  if (5 + length < body.byteLength) throw new ConnectError(`protocol error: received extra input message for ${kind} method`, Code.Unimplemented);
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

/**
 * A failed call's status: `extra` (the headers the interceptors set) with the error's `grpc-status` and
 * `grpc-message`, and the request id when the interceptors did not put it there (a refusal made before them).
 */
export function failureStatus(error: ConnectError, extra: Headers, requestId: string): Headers {
  const status = setTrailerStatus(extra, error);
  if (!status.has(REQUEST_ID_HEADER)) status.set(REQUEST_ID_HEADER, requestId);
  return status;
}

/** Answers an error without a body: the status in the headers (a trailers-only response). */
export function respondTrailersOnly(stream: ServerHttp2Stream, error: ConnectError, extra: Headers | undefined, requestId: string): void {
  if (stream.destroyed || stream.headersSent) return;
  const headers: Record<string, string | string[]> = { ":status": 200, "content-type": "application/grpc" } as never;
  outgoingHeaders(failureStatus(error, extra ?? new Headers(), requestId), headers);
  stream.respond(headers, { endStream: true });
}

/** A call whose request message was read: its input and the context its interceptors and method see. */
export interface OpenedCall {
  input: Message;
  context: HandlerContext;
}

/**
 * Reads a call's one request message and makes its context, whose signal aborts on the server's shutdown, at the
 * call's deadline (`grpc-timeout`) and on `cancelled`. A request refused here (too large, undecodable, a bad
 * timeout) is answered trailers-only and told to `onEarlyFailure`: null then.
 */
export async function openCall(
  stream: ServerHttp2Stream,
  headers: Record<string, string | string[] | undefined>,
  path: string,
  method: DescMethod,
  values: ContextValues,
  requestId: string,
  options: GrpcCallOptions,
  cancelled?: AbortSignal,
): Promise<OpenedCall | null> {
  const started = performance.now();
  try {
    const body = await readBody(stream, Number(headers["content-length"] ?? -1));
    const timeout = parseTimeout((headers["grpc-timeout"] as string | undefined) ?? null, Number.MAX_SAFE_INTEGER);
    if (timeout.error) throw timeout.error;
    let input: Message;
    try {
      input = fromBinary(method.input, unwrap(body, method.methodKind === "unary" ? "unary" : "server-streaming"));
    } catch (error) {
      throw error instanceof ConnectError ? error : new ConnectError(`parse binary: ${(error as Error).message}`, Code.InvalidArgument);
    }
    const signals = [options.shutdownSignal];
    if (cancelled) signals.push(cancelled);
    if (timeout.timeoutMs !== undefined) signals.push(AbortSignal.timeout(timeout.timeoutMs));
    const signal = signals.length === 1 ? options.shutdownSignal : AbortSignal.any(signals);
    return { input, context: contextOf(method, method.parent, path, requestHeadersOf(headers), values, timeout.timeoutMs, signal) };
  } catch (error) {
    const failure = connectErrorOf(error);
    options.onEarlyFailure({ requestId, procedure: path.slice(1), served: true, code: failure.code, durationMs: performance.now() - started });
    respondTrailersOnly(stream, failure, undefined, requestId);
    return null;
  }
}

/** A call's failure as its answer's status: Connect's error, or `internal` for anything else it threw. */
export function callError(error: unknown): ConnectError {
  return error instanceof ConnectError ? error : new ConnectError("internal error", Code.Internal, undefined, undefined, error);
}

/**
 * The headers a failed call answers beside its status: those the interceptors set (the request id, the rate limit),
 * whether it fails before its first message (trailers-only) or after (trailers).
 */
export function failureHeaders(context: HandlerContext): Headers {
  const extra = new Headers(context.responseHeader);
  extra.delete("content-type");
  context.responseTrailer.forEach((value, name) => extra.set(name, value));
  return extra;
}

/** Answers the call's headers: status 200 and those the interceptors set. The trailers follow (endWithTrailers). */
export function respondHeaders(stream: ServerHttp2Stream, context: HandlerContext): void {
  const headers: Record<string, string | string[]> = { ":status": 200 } as never;
  outgoingHeaders(context.responseHeader, headers);
  stream.respond(headers, { waitForTrailers: true });
}

/** Ends an answer whose headers were sent: `lastFrame`, if any, then `trailers`. */
export function endWithTrailers(stream: ServerHttp2Stream, trailers: Headers, lastFrame?: Uint8Array): void {
  const sent: Record<string, string | string[]> = {};
  outgoingHeaders(trailers, sent);
  stream.once("wantTrailers", () => stream.sendTrailers(sent));
  if (lastFrame === undefined) stream.end();
  else stream.end(lastFrame);
}

/** The trailers of a call that succeeded: `grpc-status` 0, then those the interceptors set (as Connect starts them). */
export function okTrailers(context: HandlerContext): Headers {
  const trailers = new Headers({ "grpc-status": "0" });
  context.responseTrailer.forEach((value, name) => trailers.set(name, value));
  return trailers;
}
