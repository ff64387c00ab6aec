// gRPC over HTTP/2 cleartext on GRPC_PORT, serving the same services as the HTTP/1.1 server. Unary and
// server-streaming calls with binary messages (what gRPC clients send) take the direct paths of
// rpc/grpc-unary.ts and rpc/grpc-server-stream.ts; every other request (JSON messages, compression, Connect or
// gRPC-Web over HTTP/2) goes to Connect's Node handler. A path no service has answers UNIMPLEMENTED. Every
// request gets its request id on arrival, so refusals made before the interceptors (unknown method, undecodable
// message, body too large) carry it and are logged too.
import { setMaxListeners } from "node:events";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { createServiceImplSpec } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { newRequestId } from "../domain/ids.ts";
import type { CallPipeline } from "../pipeline/call-pipeline.ts";
import { REQUEST_ID_HEADER } from "../pipeline/response-headers.ts";
import { connectErrorOf } from "../pipeline/connect-errors.ts";
import { connectRoutes, type RpcService } from "../rpc/connect-routes.ts";
import { respecGrpcMessage } from "../rpc/grpc-message.ts";
import { asksForCompression, type EarlyFailure, isBinaryGrpc } from "../rpc/grpc-call.ts";
import { type ServerStreamRoute, serveServerStream } from "../rpc/grpc-server-stream.ts";
import { serveUnary, type UnaryRoute } from "../rpc/grpc-unary.ts";
import { rpcProtocolOf } from "../rpc/observability-interceptor.ts";
import { callContextValues } from "../rpc/request-id.ts";
import { errorAnswer, unimplementedError } from "../rpc/unimplemented.ts";
import type { Logger } from "../observability/logger.ts";
import { limitConnections } from "./grpc-connection-limits.ts";
import { limitReceiveTime, limitRequestBody } from "./request-body-limits.ts";

export interface GrpcServer {
  listen(port: number, host: string): Promise<number>;
  /** Stops accepting, lets running calls finish for up to `graceMs`, then closes the rest. */
  close(graceMs: number): Promise<void>;
}

export interface GrpcServerOptions {
  /** A request's body must have arrived this long after its headers. */
  receiveTimeoutMs: number;
  /** Counts refusals made before a key was checked (an unknown method) against the client address. */
  pipeline: Pick<CallPipeline, "refuseAnonymous">;
  /** Hears of calls that failed before their interceptors ran (those log every other call). */
  onEarlyFailure: (failure: EarlyFailure & { protocol: string }) => void;
  /**
   * A session with no stream open this long is closed (GOAWAY, then the socket). A new connection must open its
   * first stream within this or the receive timeout, whichever is shorter.
   */
  idleTimeoutMs: number;
  /** Connections one client address may hold open at once; those over it are closed on arrival. */
  maxConnectionsPerAddress: number;
  logger: Logger;
}

type StreamListener = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, flags: number, rawHeaders: string[]) => void;

export function createGrpcServer(services: readonly RpcService[], options: GrpcServerOptions): GrpcServer {
  const shutdown = new AbortController();
  // Every open call listens on it, and event streams stay open: no listener count is a leak here.
  setMaxListeners(0, shutdown.signal);
  const unary = new Map<string, UnaryRoute>();
  const serverStreams = new Map<string, ServerStreamRoute>();
  const served = new Set<string>();
  for (const { service, implementation, interceptors } of services) {
    for (const spec of Object.values(createServiceImplSpec(service, implementation as never).methods)) {
      const path = `/${service.typeName}/${spec.method.name}`;
      served.add(path);
      if (spec.kind === "unary") unary.set(path, { spec, interceptors });
      if (spec.kind === "server_streaming") serverStreams.set(path, { spec, interceptors });
    }
  }
  const directOptions = {
    shutdownSignal: shutdown.signal,
    onEarlyFailure: (failure: EarlyFailure) => options.onEarlyFailure({ ...failure, protocol: "grpc" }),
  };

  // The call's request id is drawn on arrival, so refusals made before Connect's context exists carry it too.
  const requestIds = new WeakMap<object, string>();
  const handle = connectNodeAdapter({
    routes: connectRoutes(services),
    contextValues: (request) => callContextValues(request.socket.remoteAddress, requestIds.get(request)),
    shutdownSignal: shutdown.signal,
    // Compressed requests would escape the body limit once inflated; none of our clients need them.
    acceptCompression: [],
  });

  const server = http2.createServer((request, response) => {
    const requestId = requestIds.get(request)!;
    limitRequestBody(request, response, requestId);
    limitReceiveTime(request.stream, options.receiveTimeoutMs);
    const protocol = rpcProtocolOf(request.headers["content-type"]);
    // Connect writes grpc-message with encodeURIComponent; grpc-js would show "%3A" for ":". The trailers also
    // name the request id when the call failed before the interceptors could put it there.
    const addTrailers = response.addTrailers.bind(response);
    response.addTrailers = (trailers) => {
      const fixed = { ...(trailers as Record<string, string>) };
      if (typeof fixed["grpc-message"] === "string") fixed["grpc-message"] = respecGrpcMessage(fixed["grpc-message"]);
      if (fixed["grpc-status"] !== undefined && fixed["grpc-status"] !== "0" && fixed[REQUEST_ID_HEADER.toLowerCase()] === undefined) {
        fixed[REQUEST_ID_HEADER.toLowerCase()] = requestId;
        options.onEarlyFailure({
          requestId,
          procedure: (request.url ?? "").split("?", 1)[0]!.slice(1),
          served: true,
          code: Number(fixed["grpc-status"]),
          durationMs: 0,
          protocol,
        });
      }
      addTrailers(fixed);
    };
    handle(request, response);
  });
  limitConnections(server, {
    firstStreamTimeoutMs: Math.min(options.receiveTimeoutMs, options.idleTimeoutMs),
    idleTimeoutMs: options.idleTimeoutMs,
    maxConnectionsPerAddress: options.maxConnectionsPerAddress,
    onRefused: ({ address, refused }) =>
      options.logger.warn(
        { remote_address: address, refused, max_connections_per_address: options.maxConnectionsPerAddress },
        "gRPC connections refused: too many open from one address",
      ),
  });
  // Node's compatibility layer (request and response objects) runs only for requests the direct path leaves.
  const compat = server.listeners("stream")[0] as StreamListener;
  server.removeAllListeners("stream");
  server.on("stream", (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, flags: number, rawHeaders: string[]) => {
    const requestId = newRequestId();
    const path = headers[":path"] ?? "";
    const contentType = headers["content-type"];
    if (!served.has(path)) {
      void refuseUnknown(stream, path, contentType, requestId, headers.authorization);
      return;
    }
    if (headers[":method"] === "POST" && isBinaryGrpc(contentType) && !asksForCompression(headers["grpc-encoding"] as string | undefined)) {
      const route = unary.get(path);
      const streamRoute = route ? undefined : serverStreams.get(path);
      if (route || streamRoute) {
        limitReceiveTime(stream, options.receiveTimeoutMs);
        const values = callContextValues(stream.session?.socket?.remoteAddress, requestId);
        const served = route
          ? serveUnary(stream, headers, path, route, values, requestId, directOptions)
          : serveServerStream(stream, headers, path, streamRoute!, values, requestId, directOptions);
        void served.catch((error) => stream.destroy(error));
        return;
      }
    }
    // The compatibility layer emits "request" synchronously: its request object is the one remembered.
    server.prependOnceListener("request", (request) => requestIds.set(request, requestId));
    compat(stream, headers, flags, rawHeaders);
  });

  async function refuseUnknown(
    stream: http2.ServerHttp2Stream,
    path: string,
    contentType: string | undefined,
    requestId: string,
    authorization: string | undefined,
  ) {
    const started = performance.now();
    const address = stream.session?.socket?.remoteAddress ?? "unknown";
    // In the request log of the key's project, if it has one, as a path no method has.
    const failure = await options.pipeline.refuseAnonymous(requestId, address, unimplementedError(path), {
      authorization,
      source: "grpc",
      route: { verb: "RPC", path, template: null, successStatus: 200 },
      durationMs: performance.now() - started,
      loggedAs: "route_not_found",
    });
    const answer = errorAnswer(contentType, failure.error, failure.headers);
    options.onEarlyFailure({
      requestId,
      procedure: path.slice(1),
      served: false,
      code: connectErrorOf(failure.error).code,
      durationMs: performance.now() - started,
      protocol: rpcProtocolOf(contentType),
    });
    if (stream.destroyed) return;
    stream.respond({ ":status": answer.status, ...answer.headers }, { endStream: answer.body === undefined });
    if (answer.body !== undefined) stream.end(answer.body);
    // What the client still sends of its body is not read.
    stream.resume();
  }

  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  return {
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
      }),
    close: (graceMs) =>
      new Promise((resolve) => {
        if (!server.listening) return resolve();
        server.close(() => resolve());
        for (const session of sessions) session.close();
        setTimeout(() => {
          shutdown.abort();
          for (const session of sessions) session.destroy();
        }, graceMs).unref();
      }),
  };
}
