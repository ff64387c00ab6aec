// The doors: the one call pipeline over the registered services, the RPC interceptors, gRPC's health and
// reflection, the HTTP/1.1 server (REST, Connect, gRPC-Web, the dashboard) and the HTTP/2 gRPC server.
import type { Interceptor } from "@connectrpc/connect";
import { adminTokenMatches } from "./access/admin-token.ts";
import { StreamSlots } from "./access/stream-slots.ts";
import { PUBLIC_API } from "./api/public-api.ts";
import { type RegisteredService, ServiceRegistry } from "./api/service-registry.ts";
import { SimulatedSmsSender, type SmsSender } from "./identity/sms-sender.ts";
import { CallPipeline } from "./pipeline/call-pipeline.ts";
import { registerOpenApiRoute } from "./rest/openapi/openapi-route.ts";
import { adminInterceptor } from "./rpc/admin-interceptor.ts";
import { type RpcService, rpcServices } from "./rpc/connect-routes.ts";
import { Health, HealthStatus, healthService } from "./rpc/health-service.ts";
import { codeName, earlyFailureRecorder, observabilityInterceptor } from "./rpc/observability-interceptor.ts";
import { pipelineInterceptor } from "./rpc/pipeline-interceptor.ts";
import { reflectionServices, ServerReflectionV1, ServerReflectionV1alpha } from "./rpc/reflection-service.ts";
import { createGrpcServer } from "./server/grpc-server.ts";
import { createHttpServer } from "./server/http-server.ts";
import { ConsoleQueries } from "./store/console-queries.ts";
import type { RequestLogWriter } from "./store/request-log-writer.ts";
import type { Foundation } from "./app-foundation.ts";
import type { TenancyWiring } from "./app-tenancy.ts";
import { remainingMs, type Worker } from "./app-workers.ts";

interface ServersOptions {
  services: RegisteredService[];
  tenancy: TenancyWiring;
  adminToken: string;
  /** Where calls are recorded; none: calls are not recorded. */
  requestLog?: RequestLogWriter | undefined;
  smsSender: SmsSender;
  /** The ports to listen on, asked when the servers start. */
  ports: () => { http?: number | undefined; grpc?: number | undefined };
  /** Told the bound ports (0: a server that does not listen) once both servers listen. */
  onListening: (ports: { httpPort: number; grpcPort: number }) => void;
}

interface BoundPorts {
  httpPort: number;
  grpcPort: number;
}

export async function wireServers(foundation: Foundation, options: ServersOptions) {
  const { config, clock, timings, logger, metrics, database, dashboardSessions } = foundation;
  const { services, tenancy, adminToken } = options;
  const registry = new ServiceRegistry(services);
  const observed = observabilityInterceptor(metrics, logger);
  const pipeline = new CallPipeline({
    gate: tenancy.gate,
    idempotency: tenancy.idempotency,
    registry,
    onInternalError: (error, requestId) => logger.error({ err: error, request_id: requestId }, "unexpected failure"),
    checkAccess: tenancy.accessCheck,
    ...(options.requestLog ? { requestLog: options.requestLog } : {}),
    clock,
    streamSlots: new StreamSlots(config.maxStreamsPerKey),
  });
  const publicInterceptors = [observed, pipelineInterceptor(pipeline, "api-key")];
  const adminInterceptors = [observed, adminInterceptor(adminToken), pipelineInterceptor(pipeline, "admin")];
  const interceptorsFor = (s: RegisteredService): Interceptor[] => (s.visibility === "public" ? publicInterceptors : adminInterceptors);
  // gRPC's health and reflection services, for probes and tools: no key, logged like every call.
  const served = [...services.map((s) => s.service), Health, ServerReflectionV1, ServerReflectionV1alpha];
  const health = new HealthStatus(served);
  const reflection = reflectionServices(
    [...services.filter((s) => s.visibility === "public").map((s) => s.service), Health, ServerReflectionV1, ServerReflectionV1alpha],
    services.filter((s) => s.visibility !== "public").map((s) => s.service),
    (header) => adminTokenMatches(header.get("authorization") ?? "", `Bearer ${adminToken}`),
  );
  const infrastructure: RpcService[] = [
    { service: Health, implementation: healthService(health), interceptors: [observed] },
    { service: ServerReflectionV1, implementation: reflection.v1, interceptors: [observed] },
    { service: ServerReflectionV1alpha, implementation: reflection.v1alpha, interceptors: [observed] },
  ];
  const servedRpc = rpcServices(registry, interceptorsFor, infrastructure);
  const smsSender = options.smsSender;

  let ready = false;
  const http = await createHttpServer({
    registry,
    pipeline,
    restMethods: PUBLIC_API,
    rpcServices: servedRpc,
    extraRoutes: (scope) => registerOpenApiRoute(scope, { methods: PUBLIC_API, pipeline }),
    isReady: () => ready,
    shutdownTimeoutMs: timings.shutdownGraceMs,
    receiveTimeoutMs: timings.requestReceiveTimeoutMs,
    surface: config.role === "worker" ? "operations" : "public",
    logger,
    metrics,
    dashboard: {
      registry,
      sessions: dashboardSessions,
      queries: new ConsoleQueries(database.db),
      authenticator: tenancy.authenticator,
      rateLimiter: tenancy.rateLimiter,
      adminToken,
      clock,
      secureCookie: config.dashboardSecureCookie,
      signInLimit: config.dashboardSignInLimit,
      pipeline,
      ...(smsSender instanceof SimulatedSmsSender ? { smsOutbox: () => smsSender.messages } : {}),
      recordCall: ({ requestId, method, code, durationMs }) => {
        const procedure = `${method.parent.typeName}/${method.name}`;
        const outcome = code === null ? "ok" : codeName(code);
        metrics.rpcCalls.inc({ procedure, code: outcome, protocol: "dashboard" });
        logger.info(
          { request_id: requestId, procedure, protocol: "dashboard", code: outcome, duration_ms: Math.round(durationMs) },
          "dashboard call",
        );
      },
    },
  });
  const grpc = createGrpcServer(servedRpc, {
    receiveTimeoutMs: timings.requestReceiveTimeoutMs,
    idleTimeoutMs: config.grpcIdleTimeoutMs,
    maxConnectionsPerAddress: config.grpcMaxConnectionsPerAddress,
    logger,
    pipeline,
    onEarlyFailure: earlyFailureRecorder(metrics, logger),
  });

  let bound: BoundPorts = { httpPort: 0, grpcPort: 0 };
  // Listening; stopping refuses new connections and ends the running calls, those still running at the
  // deadline aborted. A worker process serves only /healthz and /metrics: no gRPC.
  const listening: Worker = {
    async start() {
      const ports = options.ports();
      await http.listen({ port: ports.http ?? config.port, host: config.host });
      const httpPort = (http.server.address() as { port: number }).port;
      const grpcPort = config.role === "worker" ? 0 : await grpc.listen(ports.grpc ?? config.grpcPort, config.host);
      bound = { httpPort, grpcPort };
      options.onListening(bound);
    },
    async stop(deadline) {
      await Promise.all([http.close(), grpc.close(remainingMs(deadline))]);
    },
  };
  // Ready once everything else has started; the first to hear of a drain, so probes and load balancers watching
  // /healthz or grpc.health.v1 turn away before the servers stop accepting.
  const readiness: Worker = {
    async start() {
      ready = true;
      health.serving();
    },
    async stop() {
      ready = false;
      health.drain();
    },
  };
  return { http, grpc, boundPorts: () => bound, workers: { listening, readiness } };
}
