// The HTTP/1.1 server on PORT: the REST gateway under /v1, Connect and gRPC-Web for every service,
// /healthz, and the error envelope for anything that matches no route.
import { setMaxListeners } from "node:events";
import { fastifyConnectPlugin } from "@connectrpc/connect-fastify";
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type { DescribedMethod } from "../api/method-description.ts";
import type { ServiceRegistry } from "../api/service-registry.ts";
import { svcError } from "../domain/errors.ts";
import { newRequestId } from "../domain/ids.ts";
import { MAX_BODY_BYTES } from "../domain/limits.ts";
import type { CallPipeline } from "../pipeline/call-pipeline.ts";
import { callContextValues } from "../rpc/request-id.ts";
import { connectRoutes, type RpcService } from "../rpc/connect-routes.ts";
import { errorAnswer, isProcedurePath, unimplementedError } from "../rpc/unimplemented.ts";
import type { Logger } from "../observability/logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import { clientErrorResponder } from "../rest/client-error.ts";
import { errorRenderer } from "../rest/error-handler.ts";
import { identityHeaders } from "../pipeline/response-headers.ts";
import { restGateway } from "../rest/rest-gateway.ts";
import { dashboardRoutes } from "../dashboard/dashboard-routes.ts";
import type { DashboardOptions } from "../dashboard/console-router.ts";
import { drainBodyBeforeClose } from "./drain-before-close.ts";
import { limitRequestBody } from "./request-body-limits.ts";

export interface HttpServerOptions {
  registry: ServiceRegistry;
  pipeline: CallPipeline;
  /** The public methods the REST gateway serves. */
  restMethods: readonly DescribedMethod[];
  /** The services served over Connect and gRPC-Web, with their interceptors. */
  rpcServices: readonly RpcService[];
  /** Extra routes on the root (for example `/v1/openapi.json`, `/metrics`). */
  extraRoutes?: (app: FastifyInstance) => void | Promise<void>;
  isReady: () => boolean;
  /**
   * "public": the API (REST, Connect) and the operations routes; "operations": /healthz and /metrics only
   * (a worker process).
   */
  surface: "public" | "operations";
  /** A request's headers and body must have arrived this long after it started. */
  receiveTimeoutMs: number;
  /** Requests still running when the server closes get this long to finish. */
  shutdownTimeoutMs: number;
  logger: Logger;
  metrics: Metrics;
  /** The dashboard under /dashboard (the API role only). */
  dashboard?: DashboardOptions;
}

/**
 * Longest path parameter a route is matched with: Node's whole header size (16 KiB, request line included), so
 * the router never refuses a parameter the HTTP parser let through (beyond it, 431).
 */
const MAX_PATH_PARAM_LENGTH = 16 * 1024;

export async function createHttpServer(options: HttpServerOptions): Promise<FastifyInstance> {
  const renderError = errorRenderer(options.pipeline);
  const { receiveTimeoutMs } = options;
  const app = Fastify({
    // Headers and body must arrive within the receive timeout (slow clients cannot hold connections); Node
    // checks open requests every second instead of every 30 s so the limit holds to the second.
    requestTimeout: receiveTimeoutMs,
    http: { headersTimeout: receiveTimeoutMs, connectionsCheckingInterval: 1000 },
    // The API has no HEAD routes: HEAD answers route_not_found like any other unmatched method.
    exposeHeadRoutes: false,
    // A path parameter longer than Fastify's default 100 characters still reaches its route, which answers its
    // own 404 (user_not_found, ...) instead of Fastify's 414 (rendered invalid_json).
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    clientErrorHandler: clientErrorResponder(options.pipeline),
    // A path Fastify cannot even decode (a stray "%") matches no route.
    frameworkErrors: (error, request, reply) => {
      void renderError(
        error.code === "FST_ERR_BAD_URL" ? svcError("route_not_found", "No route matches this method and path.") : error,
        request,
        reply,
      );
    },
    genReqId: () => newRequestId(),
    requestIdHeader: false,
    bodyLimit: MAX_BODY_BYTES,
    loggerInstance: options.logger as FastifyBaseLogger,
    // One line per request, written when it is answered (below), instead of Fastify's two.
    logController: new LogController({ requestIdLogLabel: "request_id", disableRequestLogging: true }),
    // While draining, a request on a connection still open is served (with Connection: close) rather than
    // answered by Fastify's own 503, which has neither the error envelope nor the five headers.
    return503OnClosing: false,
  });

  // Node's server.close() ends only the connections idle at that moment: a keep-alive connection busy then
  // stays open after its response until the keep-alive timeout (72 s), holding close() up. While closing,
  // connections are let go as they fall idle. When the grace period ends, those still busy are closed too, as
  // Connect and gRPC calls are aborted then: the drain goes on to stop the workers in order instead of waiting
  // for a request that may never end. The request's method is not interrupted; only its answer is lost, as
  // with any client that goes away (an Idempotency-Key retry finds what it wrote).
  app.addHook("preClose", (done) => {
    const sweep = setInterval(() => app.server.closeIdleConnections(), 50).unref();
    const cut = setTimeout(() => app.server.closeAllConnections(), options.shutdownTimeoutMs).unref();
    app.server.once("close", () => {
      clearInterval(sweep);
      clearTimeout(cut);
    });
    done();
  });
  app.addHook("onRequest", async (request, reply) => {
    reply.headers(identityHeaders(request.id));
    // A refusal answered before its body has ended (413) reaches the client: the rest is drained before the close.
    drainBodyBeforeClose(request.raw, receiveTimeoutMs);
  });
  app.addHook("onResponse", async (request, reply) => {
    const route = request.routeOptions.url ?? "unmatched";
    const labels = { route, method: request.method, status: String(reply.statusCode) };
    options.metrics.httpRequests.inc(labels);
    options.metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
    request.log.info(
      {
        method: request.method,
        url: request.url,
        route,
        status: reply.statusCode,
        duration_ms: Math.round(reply.elapsedTime * 10) / 10,
        remote_address: request.ip,
      },
      "request completed",
    );
  });
  app.setErrorHandler(renderError);
  // Outside the REST and Connect scopes no body is read, so an unmatched route answers route_not_found
  // whatever its body (too large, broken JSON): the route is the first check.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", (_request, _payload, done) => done(null, undefined));
  app.setNotFoundHandler(async (request, reply) => {
    // A call of a method no service has answers as an RPC server does (Connect `unimplemented`, gRPC-Web
    // status 12), not with the REST envelope its client could not read; `/v1/...` paths stay REST's.
    const path = request.url.split("?", 1)[0]!;
    if (options.surface === "public" && isProcedurePath(path)) {
      const failure = await options.pipeline.refuseAnonymous(request.id, request.ip, unimplementedError(path), {
        authorization: request.headers.authorization,
        source: (request.headers["content-type"] ?? "").startsWith("application/grpc") ? "grpc" : "connect",
        route: { verb: "RPC", path, template: null, successStatus: 200 },
        durationMs: reply.elapsedTime,
        loggedAs: "route_not_found",
      });
      const answer = errorAnswer(request.headers["content-type"], failure.error, failure.headers);
      return reply
        .code(answer.status)
        .headers(answer.headers)
        .send(answer.body === undefined ? "" : Buffer.from(answer.body));
    }
    throw svcError("route_not_found", "No route matches this method and path.");
  });

  app.get("/metrics", async (_request, reply) => {
    return reply.type(options.metrics.registry.contentType).send(await options.metrics.registry.metrics());
  });
  app.get("/healthz", async (_request, reply) => {
    if (!options.isReady()) return reply.code(503).send({ status: "starting" });
    return { status: "ok" };
  });

  if (options.surface === "operations") return app;
  await app.register(async (scope) => {
    // Connect reads its bodies itself: the same 64 KiB limit as REST, enforced while reading.
    scope.addHook("onRequest", async (request, reply) => {
      limitRequestBody(request.raw, reply.raw, request.id);
      // Connect writes its answers to the raw response, past Fastify's headers: a call refused before the
      // interceptors (an undecodable message) still names its request id. The interceptors' own value (a
      // replay's original id) takes precedence.
      for (const [name, value] of Object.entries(identityHeaders(request.id))) reply.raw.setHeader(name, value);
    });
    // Calls still running when the grace period ends are aborted. The timer is ours and unref'd: connect-fastify's
    // own (its shutdownTimeoutMs option) is not, and kept a closed server's process alive for the whole period.
    const shutdown = new AbortController();
    // Every open call listens on it, and event streams stay open: no listener count is a leak here.
    setMaxListeners(0, shutdown.signal);
    scope.addHook("preClose", (done) => {
      setTimeout(() => shutdown.abort(), options.shutdownTimeoutMs).unref();
      done();
    });
    await scope.register(fastifyConnectPlugin, {
      routes: connectRoutes(options.rpcServices),
      // The call keeps Fastify's request id, so its request log line and its RPC log line share one id.
      contextValues: (request) => callContextValues(request.ip, request.id),
      shutdownSignal: shutdown.signal,
      // Compressed requests would escape the body limit once inflated; none of our clients need them.
      acceptCompression: [],
    });
  });
  await app.register(restGateway, {
    registry: options.registry,
    pipeline: options.pipeline,
    methods: options.restMethods,
    bodyLimit: MAX_BODY_BYTES,
  });
  if (options.extraRoutes) await app.register(async (scope) => options.extraRoutes!(scope));
  if (options.dashboard) await app.register(dashboardRoutes, { prefix: "/dashboard", ...options.dashboard });
  return app;
}
