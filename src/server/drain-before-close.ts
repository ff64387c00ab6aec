// An answer that closes the connection while the client is still sending its body (413 payload_too_large, or any
// refusal made before the body was read) must reach the client. Node closes the socket as soon as such an answer
// is written; the client's bytes that keep arriving then make the kernel reset the connection, and a client still
// writing its body (fetch, node:http streaming it) fails with EPIPE or ECONNRESET instead of reading the answer.
// So once the answer is written the server ends its side (FIN) and reads and discards the rest of the body, then
// closes: when the body ends, when DRAIN_MAX_BYTES more have arrived, or at the body's deadline (the receive
// time-out from the request's arrival), whichever comes first. A client that never finishes is still cut then.
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";

/** How much of a refused body is read and discarded after the answer before the connection is closed anyway. */
const DRAIN_MAX_BYTES = 8 * 1024 * 1024;

const receiving = Symbol("request being received");
const deadline = Symbol("when its body must have arrived");

type DrainingSocket = Socket & { [receiving]?: IncomingMessage | undefined; [deadline]?: number };

/**
 * Called as a request arrives: should its answer close the connection before its body has ended, the body is
 * drained first. Costs two property writes per request; the socket's close is replaced once per connection.
 */
export function drainBodyBeforeClose(request: IncomingMessage, receiveTimeoutMs: number): void {
  const socket = request.socket as DrainingSocket;
  // Node's HTTP server calls destroySoon() once an answer that closes the connection is written.
  if (socket[receiving] === undefined) socket.destroySoon = () => closeAfterDraining(socket);
  socket[receiving] = request;
  socket[deadline] = performance.now() + receiveTimeoutMs;
}

function closeAfterDraining(socket: DrainingSocket): void {
  if (socket.writable) socket.end();
  const request = socket[receiving];
  socket[receiving] = undefined;
  if (request === undefined || request.complete || request.destroyed) {
    closeOnceWritten(socket);
    return;
  }
  let discarded = 0;
  const stop = () => {
    clearTimeout(timer);
    request.off("data", discard);
    request.off("end", ended);
  };
  const ended = () => {
    stop();
    closeOnceWritten(socket);
  };
  const discard = (chunk: Buffer) => {
    discarded += chunk.byteLength;
    if (discarded <= DRAIN_MAX_BYTES) return;
    stop();
    socket.destroy();
  };
  const timer = setTimeout(
    () => {
      stop();
      socket.destroy();
    },
    Math.max(0, (socket[deadline] ?? 0) - performance.now()),
  ).unref();
  socket.once("close", stop);
  // A reader that gave up (a body iterator left at the limit) would keep the body paused: nothing would be read.
  request.removeAllListeners("readable");
  request.removeAllListeners("data");
  request.on("data", discard);
  request.once("end", ended);
  request.resume();
}

/** Node's own destroySoon: the socket is destroyed once what was written to it has been flushed. */
function closeOnceWritten(socket: Socket): void {
  if (socket.destroyed) return;
  if (socket.writableFinished) socket.destroy();
  else socket.once("finish", () => socket.destroy());
}
