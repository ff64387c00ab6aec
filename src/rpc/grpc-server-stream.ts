// Server-streaming gRPC calls (binary messages, no compression) straight over an HTTP/2 stream: read the one
// enveloped request message, run the method through Connect's own streaming invocation with the same
// interceptors as every other transport, write each message it yields as one gRPC frame, and end with
// `grpc-status` in the trailers (a trailers-only answer when it fails before its first message). Connect's handler
// passes every message through five more async iterables (serialize, compress, join, catch, the Node adapter's
// writer), encodes it again for each stream and copies it twice more; an event stream's message, shared by every
// stream of a project, is encoded and framed once here and written to each stream as the same bytes.
import type { ServerHttp2Stream } from "node:http2";
import { type DescMessage, type Message, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, type ContextValues, type Interceptor, type MethodImplSpec } from "@connectrpc/connect";
import { transformInvokeImplementation } from "@connectrpc/connect/protocol";
import { encodingOf } from "../messages/encoded-once.ts";
import {
  callError,
  endWithTrailers,
  envelope,
  failureHeaders,
  failureStatus,
  type GrpcCallOptions,
  okTrailers,
  openCall,
  respondHeaders,
  respondTrailersOnly,
} from "./grpc-call.ts";

export interface ServerStreamRoute {
  spec: Extract<MethodImplSpec, { kind: "server_streaming" }>;
  interceptors: Interceptor[];
}

/**
 * Bytes written but not yet taken by HTTP/2 (the client's flow-control window) past which the stream stops taking
 * messages from its method until they drain: a reader that does not read holds up its method, whose own limit then
 * ends it (an event stream's backlog), not this process's memory.
 */
const MAX_UNSENT_BYTES = 256 * 1024;

/** gRPC frames of the messages encoded once for many streams (messages/encoded-once.ts), made at their first write. */
const sharedFrames = new WeakMap<Message, Buffer>();

/** A message as one gRPC frame: not compressed, its length, its bytes. */
function frameOf(schema: DescMessage, message: Message): Buffer {
  const encoding = encodingOf(message);
  if (encoding === undefined) return envelope(toBinary(schema, message));
  let frame = sharedFrames.get(message);
  if (frame === undefined) {
    frame = envelope(encoding);
    sharedFrames.set(message, frame);
  }
  return frame;
}

/**
 * The streams corked in this run of the microtask queue, uncorked together once it has run: one tick for a burst
 * reaching every stream, not one per stream. Uncorking one already uncorked (past MAX_UNSENT_BYTES) does nothing.
 */
const corkedStreams: ServerHttp2Stream[] = [];

function uncorkAll(): void {
  for (const stream of corkedStreams) stream.uncork();
  corkedStreams.length = 0;
}

/** Resolves once the stream has taken what was written, or closed. */
function drained(stream: ServerHttp2Stream): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off("drain", done);
      stream.off("close", done);
      resolve();
    };
    stream.on("drain", done);
    stream.on("close", done);
  });
}

async function* only(message: Message): AsyncIterable<Message> {
  yield message;
}

/**
 * Runs one server-streaming call whose route is known, until its method ends, fails, or the client cancels (the
 * stream closes: the method's signal aborts and its iterator is returned, so what it holds is released).
 */
export async function serveServerStream(
  stream: ServerHttp2Stream,
  headers: Record<string, string | string[] | undefined>,
  path: string,
  route: ServerStreamRoute,
  values: ContextValues,
  requestId: string,
  options: GrpcCallOptions,
): Promise<void> {
  const cancelled = new AbortController();
  const cancel = () => cancelled.abort(new ConnectError("the stream was closed", Code.Canceled));
  stream.once("close", cancel);
  // A reset or a failed write also closes the stream; its error is that close, not the process's.
  stream.on("error", cancel);
  const opened = await openCall(stream, headers, path, route.spec.method, values, requestId, options, cancelled.signal);
  if (opened === null) return;
  const { input, context } = opened;
  const schema = route.spec.method.output;
  const messages = transformInvokeImplementation(route.spec, context as never, route.interceptors)(only(input))[Symbol.asyncIterator]();
  // The messages the method yields in one run of the microtask queue (a burst the stream finds waiting) go to
  // HTTP/2 in one write: corked at the first, uncorked once the queue has run.
  try {
    for (let next = await messages.next(); !next.done; next = await messages.next()) {
      if (stream.destroyed) {
        await messages.return?.();
        return;
      }
      // Headers wait for the first message, as Connect's do: the interceptors set theirs as the method opens.
      if (!stream.headersSent) respondHeaders(stream, context);
      if (stream.writableCorked === 0) {
        stream.cork();
        if (corkedStreams.push(stream) === 1) process.nextTick(uncorkAll);
      }
      stream.write(frameOf(schema, next.value));
      if (stream.writableLength >= MAX_UNSENT_BYTES) {
        stream.uncork();
        if (stream.writableNeedDrain) await drained(stream);
      }
    }
  } catch (error) {
    if (stream.destroyed) return;
    const failure = callError(error);
    if (!stream.headersSent) {
      respondTrailersOnly(stream, failure, failureHeaders(context), requestId);
      return;
    }
    endWithTrailers(stream, failureStatus(failure, new Headers(context.responseTrailer), requestId));
    return;
  }
  if (stream.destroyed) return;
  if (!stream.headersSent) respondHeaders(stream, context);
  endWithTrailers(stream, okTrailers(context));
}
