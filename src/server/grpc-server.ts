// gRPC over HTTP/2 cleartext on GRPC_PORT, from the same router as the HTTP/1.1 server.
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { RegisteredService, ServiceRegistry } from "../api/service-registry.ts";
import { newRequestId } from "../domain/ids.ts";
import { callContextValues } from "../rpc/request-id.ts";
import { connectRoutes } from "../rpc/connect-routes.ts";
import { limitReceiveTime, limitRequestBody } from "./request-body-limits.ts";

export interface GrpcServer {
  listen(port: number, host: string): Promise<number>;
  /** Stops accepting, lets running calls finish for up to `graceMs`, then closes the rest. */
  close(graceMs: number): Promise<void>;
}

export interface GrpcServerOptions {
  /** A request's body must have arrived this long after its headers. */
  receiveTimeoutMs: number;
}

export function createGrpcServer(
  registry: ServiceRegistry,
  interceptorsFor: (service: RegisteredService) => Interceptor[],
  options: GrpcServerOptions,
): GrpcServer {
  const shutdown = new AbortController();
  const handle = connectNodeAdapter({
    routes: connectRoutes(registry, interceptorsFor),
    contextValues: (request) => callContextValues(request.socket.remoteAddress, requestIds.get(request)),
    shutdownSignal: shutdown.signal,
    // Compressed requests would escape the body limit once inflated; none of our clients need them.
    acceptCompression: [],
  });
  // The call's request id is drawn on arrival, so refusals made before Connect's context exists carry it too.
  const requestIds = new WeakMap<object, string>();
  const server = http2.createServer((request, response) => {
    const requestId = newRequestId();
    requestIds.set(request, requestId);
    limitRequestBody(request, response, requestId);
    limitReceiveTime(request, options.receiveTimeoutMs);
    handle(request, response);
  });
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
