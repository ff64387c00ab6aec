// Limits on request bodies that Connect, gRPC-Web and gRPC read themselves (REST's are Fastify's): at most
// MAX_BODY_BYTES, refused while reading, before the call is authenticated, and a body must arrive within the
// receive timeout of its headers.
import type { IncomingMessage, ServerResponse } from "node:http";
import http2 from "node:http2";
import { MAX_BODY_BYTES } from "../domain/limits.ts";
import { REQUEST_ID_HEADER } from "../pipeline/response-headers.ts";
import { tooLarge } from "../rpc/grpc-call.ts";

/**
 * Connect reads a request body by iterating the Node request. Iteration is replaced, on this request only, by
 * one that refuses a declared Content-Length over the limit before reading a byte, and stops at the first
 * chunk past it. The error it throws is the service's own (`payload_too_large`, RESOURCE_EXHAUSTED, with the
 * call's request id), which Connect answers as it is in every protocol. The connection is not kept: what the
 * client still sends is discarded and the connection closed once the refusal is written.
 */
export function limitRequestBody(
  request: IncomingMessage | http2.Http2ServerRequest,
  response: ServerResponse | http2.Http2ServerResponse,
  requestId: string,
  maxBytes: number = MAX_BODY_BYTES,
): void {
  const read = request[Symbol.asyncIterator].bind(request);
  const refuse = () => {
    if ("shouldKeepAlive" in response) response.shouldKeepAlive = false;
    request.resume();
    const error = tooLarge();
    error.metadata.set(REQUEST_ID_HEADER, requestId);
    return error;
  };
  Object.defineProperty(request, Symbol.asyncIterator, {
    configurable: true,
    value: async function* limitedChunks(): AsyncGenerator<Buffer> {
      const declared = Number(request.headers["content-length"]);
      if (Number.isFinite(declared) && declared > maxBytes) throw refuse();
      // Iterated by hand: leaving a for-await early would destroy the request, and the socket with it, before
      // the refusal is written.
      const chunks = read();
      let received = 0;
      for (;;) {
        const next = await chunks.next();
        if (next.done) return;
        const chunk = next.value as Buffer;
        received += chunk.byteLength;
        if (received > maxBytes) throw refuse();
        yield chunk;
      }
    },
  });
}

/**
 * An HTTP/2 stream whose request has not fully arrived this long after its headers is cancelled. Arrived means the
 * client ended its side (END_STREAM), whether or not the handler has read to that end: a server-streaming call reads
 * its one message and then answers for as long as the stream lasts.
 */
export function limitReceiveTime(stream: http2.ServerHttp2Stream, timeoutMs: number): void {
  if (stream.readableEnded) return;
  const timer = setTimeout(() => {
    if (!stream.closed && !stream.state.remoteClose) stream.close(http2.constants.NGHTTP2_CANCEL);
  }, timeoutMs);
  timer.unref();
  const clear = () => clearTimeout(timer);
  stream.once("end", clear);
  stream.once("close", clear);
}
