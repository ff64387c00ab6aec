// Composition root: repositories, services, the HTTP and gRPC servers and the job workers of one process.
import type { Interceptor } from "@connectrpc/connect";
import type { FastifyInstance } from "fastify";
import { create } from "@bufbuild/protobuf";
import { AdminService, CreateApiKeyResponseSchema, type CreateApiKeyResponse } from "../gen/svc/admin/v1/admin_pb.ts";
import { EventsService } from "../gen/svc/v1/events_pb.ts";
import { RequestLogsService } from "../gen/svc/v1/request_logs_pb.ts";
import { UsersService } from "../gen/svc/v1/users_pb.ts";
import { WebhookEndpointsService } from "../gen/svc/v1/webhook_endpoints_pb.ts";
import type { Config } from "./config.ts";
import { systemClock, type Clock } from "./domain/clock.ts";
import { PUBLIC_API } from "./api/public-api.ts";
import { REQUEST_RECEIVE_TIMEOUT_MS } from "./domain/limits.ts";
import { CallPipeline } from "./pipeline/call-pipeline.ts";
import { createHttpServer } from "./server/http-server.ts";
import { ConsoleQueries } from "./store/console-queries.ts";
import { DashboardSessionRepository } from "./store/dashboard-session-repository.ts";
import { registerOpenApiRoute } from "./rest/openapi/openapi-route.ts";
import { JobQueue } from "./jobs/job-queue.ts";
import { RelaySweeper } from "./events/relay-sweeper.ts";
import { createLogger, type Logger } from "./observability/logger.ts";
import { Metrics } from "./observability/metrics.ts";
import { adminInterceptor } from "./rpc/admin-interceptor.ts";
import { codeName, earlyFailureRecorder, observabilityInterceptor } from "./rpc/observability-interceptor.ts";
import { rpcServices, type RpcService } from "./rpc/connect-routes.ts";
import { Health, HealthStatus, healthService } from "./rpc/health-service.ts";
import { reflectionServices, ServerReflectionV1, ServerReflectionV1alpha } from "./rpc/reflection-service.ts";
import { createGrpcServer, type GrpcServer } from "./server/grpc-server.ts";
import { pipelineInterceptor } from "./rpc/pipeline-interceptor.ts";
import { AdminServiceImpl } from "./services/admin-service.ts";
import { adminTokenMatches } from "./access/admin-token.ts";
import { ApiKeyAuthenticator } from "./access/api-key-authenticator.ts";
import type { EventFanout } from "./events/event-fanout.ts";
import { EventRelay } from "./events/event-relay.ts";
import { LiveEvents } from "./events/live-events.ts";
import { StreamSlots } from "./access/stream-slots.ts";
import { EventsServiceImpl } from "./services/events-service.ts";
import { LiveRequestLogs } from "./services/live-request-logs.ts";
import { RequestLogsServiceImpl } from "./services/request-logs-service.ts";
import { RequestLogRepository } from "./store/request-log-repository.ts";
import { DEFAULT_REQUEST_LOG_WRITER, RequestLogWriter } from "./store/request-log-writer.ts";
import { IdempotencyGuard } from "./access/idempotency-guard.ts";
import { RateLimiter } from "./access/rate-limiter.ts";
import { RequestGate } from "./access/request-gate.ts";
import { ServiceRegistry, type RegisteredService } from "./api/service-registry.ts";
import { TenancyAdmin } from "./services/tenancy-admin.ts";
import { TenantSettings } from "./services/tenant-settings.ts";
import { UserLifecycle } from "./services/user-lifecycle.ts";
import { UsersServiceImpl } from "./services/users-service.ts";
import { WebhookEndpointsServiceImpl } from "./services/webhook-endpoints-service.ts";
import { ApiKeyRepository } from "./store/api-key-repository.ts";
import { databasePorts, isReplicaSet, type Database } from "./store/database.ts";
import { EventRepository } from "./store/event-repository.ts";
import { IdempotencyRepository } from "./store/idempotency-repository.ts";
import { OrganizationRepository } from "./store/organization-repository.ts";
import { ProjectRepository } from "./store/project-repository.ts";
import { RateLimitRepository } from "./store/rate-limit-repository.ts";
import { SignupFlowRepository } from "./store/signup-flow-repository.ts";
import { KycSessionArchive } from "./store/kyc-session-archive.ts";
import { UserRepository } from "./store/user-repository.ts";
import { WebhookDeliveryRepository } from "./store/webhook-delivery-repository.ts";
import { WebhookEndpointRepository } from "./store/webhook-endpoint-repository.ts";
import { SimulatedCustodian, type WalletCustodian } from "./wallets/custodian.ts";
import { createHmac } from "node:crypto";
import { KycSessionsService, PhoneVerificationService, SandboxService } from "../gen/svc/v1/identity_pb.ts";
import { methodAccessCheck } from "./api/method-access.ts";
import { VerificationCodes } from "./domain/phone-verification.ts";
import { SimulatedKycProvider, type KycProvider } from "./identity/kyc-provider.ts";
import { SimulatedSmsSender, type SmsSender } from "./identity/sms-sender.ts";
import { KycLifecycle } from "./services/kyc-lifecycle.ts";
import { KycSessionsServiceImpl, SandboxServiceImpl } from "./services/kyc-sessions-service.ts";
import { PhoneVerificationServiceImpl } from "./services/phone-verification-service.ts";
import { WalletProvisioner } from "./wallets/wallet-provisioner.ts";
import { SandboxTransactionsService, TransactionsService } from "../gen/svc/v1/transactions_pb.ts";
import { Ledger } from "./ledger/ledger.ts";
import { SandboxTransactionsServiceImpl, TransactionsServiceImpl } from "./services/transactions-service.ts";
import { TransactionRepository } from "./store/transaction-repository.ts";
import type { WalletLedgerRepository } from "./store/wallet-ledger.ts";
import type { LookupAll } from "./webhooks/address-vetting.ts";
import { DEFAULT_MAX_PENDING_PER_ENDPOINT } from "./webhooks/delivery-policy.ts";
import { DELIVERY_JOB, WebhookDelivery } from "./webhooks/webhook-delivery.ts";

export interface AppOptions {
  config: Config;
  database: Database;
  /** Admin bearer token (config's, or one generated by the caller). */
  adminToken: string;
  clock?: Clock;
  custodian?: WalletCustodian;
  /** The SMS provider of live phone verification; by default a simulated one that keeps messages in memory. */
  smsSender?: SmsSender;
  /** The identity verification provider of live KYC sessions; by default a simulated one. */
  kycProvider?: KycProvider;
  /** Where unexpected errors go (bugs, outages); they never reach clients. */
  onError?: (error: unknown, context: string) => void;
  /** Timings of background work, by default the configuration's; tests shorten them. */
  timings?: Partial<AppTimings>;
  /** JSON logs; by default at the configured level (LOG_LEVEL) on standard output. */
  logger?: Logger;
  /** Name resolution of webhook hosts (creation checks and every attempt); tests inject one. */
  webhookLookup?: LookupAll;
  /** Pending deliveries per endpoint past which new events are recorded as `queue_full`; tests lower it. */
  webhookMaxPendingPerEndpoint?: number;
  /** Whether calls are recorded in the request log (default true); the request-log benchmark measures both. */
  recordRequests?: boolean;
}

export interface AppTimings {
  jobPollMs: number;
  jobLockLifetimeMs: number;
  sweepIntervalMs: number;
  sweepStaleAfterMs: number;
  walletSyncBudgetMs: number;
  walletRetryDelaysMs: number[];
  shutdownGraceMs: number;
  /** A request's headers and body must have arrived this long after it started (a contract limit; tests shorten it). */
  requestReceiveTimeoutMs: number;
}

/** The timings the configuration sets (environment variables, defaults in config.ts). */
export function configuredTimings(config: Config): AppTimings {
  return {
    jobPollMs: config.jobPollMs,
    jobLockLifetimeMs: config.jobLockMs,
    sweepIntervalMs: config.relaySweepMs,
    sweepStaleAfterMs: config.relayStaleMs,
    walletSyncBudgetMs: config.walletSyncBudgetMs,
    walletRetryDelaysMs: config.walletRetrySchedule,
    shutdownGraceMs: config.shutdownGraceMs,
    requestReceiveTimeoutMs: REQUEST_RECEIVE_TIMEOUT_MS,
  };
}

export interface App {
  http: FastifyInstance;
  grpc: GrpcServer;
  repositories: Repositories;
  tenancy: TenancyAdmin;
  relaySweeper: RelaySweeper;
  jobs: JobQueue;
  /** The live events of this process's open event streams. */
  liveEvents: LiveEvents;
  /** The live request log entries of this process's open tails. */
  liveRequestLogs: LiveRequestLogs;
  custodian: WalletCustodian;
  smsSender: SmsSender;
  kycProvider: KycProvider;
  /** Listens on the configured (or given) ports; answers the bound ports. */
  listen(ports?: { http?: number; grpc?: number }): Promise<{ httpPort: number; grpcPort: number }>;
  /** Graceful stop: stop accepting, finish running requests and jobs. The database stays open. */
  close(): Promise<void>;
}

export interface Repositories {
  organizations: OrganizationRepository;
  projects: ProjectRepository;
  apiKeys: ApiKeyRepository;
  rateLimits: RateLimitRepository;
  idempotency: IdempotencyRepository;
  users: UserRepository;
  kycSessionArchive: KycSessionArchive;
  events: EventRepository;
  signupFlows: SignupFlowRepository;
  webhookEndpoints: WebhookEndpointRepository;
  webhookDeliveries: WebhookDeliveryRepository;
  transactions: TransactionRepository;
  walletLedger: WalletLedgerRepository;
  requestLogs: RequestLogRepository;
}

function createRepositories(database: Database): Repositories {
  const { db } = database;
  const users = new UserRepository(db);
  return {
    organizations: new OrganizationRepository(db),
    projects: new ProjectRepository(db),
    apiKeys: new ApiKeyRepository(db),
    rateLimits: new RateLimitRepository(db),
    idempotency: new IdempotencyRepository(db),
    users,
    kycSessionArchive: new KycSessionArchive(db),
    events: new EventRepository(db),
    signupFlows: new SignupFlowRepository(db),
    webhookEndpoints: new WebhookEndpointRepository(db),
    webhookDeliveries: new WebhookDeliveryRepository(db),
    transactions: new TransactionRepository(db),
    walletLedger: users.ledger,
    requestLogs: new RequestLogRepository(db),
  };
}

export async function createApp(options: AppOptions): Promise<App> {
  const { config, database } = options;
  const clock = options.clock ?? systemClock;
  const timings = { ...configuredTimings(config), ...options.timings };
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  const onError = options.onError ?? ((error: unknown, context: string) => logger.error({ err: error, context }, "unexpected failure"));
  const repositories = createRepositories(database);
  const metrics = new Metrics({
    pendingDeliveries: () => repositories.webhookDeliveries.countAllPending(),
    deliveryLagSeconds: () => jobs.lagSeconds(clock(), [DELIVERY_JOB]),
    jobLagSeconds: () => jobs.lagSeconds(clock()),
  });
  repositories.events.onInserted((events) => {
    for (const event of events) metrics.eventsCreated.inc({ type: event.type });
  });
  const dashboardSessions = new DashboardSessionRepository(database.db);
  await Promise.all([...Object.values(repositories), dashboardSessions].map((r) => ("ensureIndexes" in r ? r.ensureIndexes() : undefined)));

  const authenticator = new ApiKeyAuthenticator(repositories.apiKeys, repositories.organizations, {
    clock,
    defaultRateLimit: config.rateLimit,
    cacheMs: config.authCacheMs,
    onBackgroundError: (error) => onError(error, "api key last use"),
  });
  const rateLimiter = new RateLimiter(repositories.rateLimits, clock);
  const gate = new RequestGate(authenticator, rateLimiter, config.rateLimit);
  const idempotency = new IdempotencyGuard(repositories.idempotency, clock, config.idempotencyLockMs);
  const role = config.role;
  const replicaSet = await isReplicaSet(database);
  const jobs = new JobQueue(database.db, {
    pollIntervalMs: timings.jobPollMs,
    lockLifetimeMs: timings.jobLockLifetimeMs,
    // Delivery jobs have their own concurrency (SVC_WEBHOOK_CONCURRENCY) beside the other jobs'.
    maxConcurrency: config.jobConcurrency + config.webhookConcurrency,
    defaultConcurrency: config.jobConcurrency,
    changeStreams: replicaSet,
  });
  jobs.onFailure((error, name) => onError(error, `job ${name}`));

  // Sandbox endpoints may use loopback hosts, but not to reach this service or its database: their ports (the
  // bound ones are added at listen, since 0 picks a free port) are refused at creation, update and every attempt.
  const refusedLoopbackPorts = new Set([config.port, config.grpcPort, ...databasePorts(database)].filter((port) => port > 0));
  const webhookSend = {
    timeoutMs: config.webhookTimeoutMs,
    clock,
    refusedLoopbackPorts,
    ...(options.webhookLookup ? { lookup: options.webhookLookup } : {}),
  };
  const webhooks = new WebhookDelivery(
    {
      deliveries: repositories.webhookDeliveries,
      endpoints: repositories.webhookEndpoints,
      events: repositories.events,
      jobs,
      clock,
      onError: (e) => onError(e, "webhook delivery"),
      onAttempt: (error) => metrics.deliveryAttempts.inc({ outcome: error === null ? "succeeded" : "failed", error: error ?? "none" }),
    },
    {
      send: webhookSend,
      retryScheduleMs: config.webhookRetrySchedule,
      maxPendingPerEndpoint: options.webhookMaxPendingPerEndpoint ?? DEFAULT_MAX_PENDING_PER_ENDPOINT,
      concurrency: config.webhookConcurrency,
      deliversInProcess: role !== "api",
      recoveryRatePerSecond: config.webhookRecoveryRate,
    },
  );
  await webhooks.ensureIndexes();
  // In the background: a large backlog must not hold the process's start; the jobs it adds run as they are written.
  webhooks.adoptPending().catch((error: unknown) => onError(error, "webhook delivery adoption"));
  const fanout: EventFanout = webhooks.fanout;
  const relay = new EventRelay(repositories.events, repositories.users, fanout, clock);
  const backgroundError = (error: unknown) => onError(error, "event relay");
  const custodian = options.custodian ?? new SimulatedCustodian();
  const wallets = new WalletProvisioner(repositories.users, custodian, jobs, clock, {
    syncBudgetMs: timings.walletSyncBudgetMs,
    retryDelaysMs: timings.walletRetryDelaysMs,
  });
  const tenancy = new TenancyAdmin(repositories, authenticator, clock);
  const ledger = new Ledger({
    wallets: repositories.walletLedger,
    transactions: repositories.transactions,
    relay,
    payouts: { payOut: (request, signal) => custodian.payOut?.(request, signal) ?? Promise.resolve() },
    jobs,
    clock,
    onBackgroundError: (error) => onError(error, "ledger"),
  });
  const settings = new TenantSettings(repositories.projects, repositories.signupFlows, clock, config.settingsCacheMs);
  const lifecycle = new UserLifecycle(repositories.users, relay, clock, backgroundError);
  const smsSender = options.smsSender ?? new SimulatedSmsSender();
  const kycProvider = options.kycProvider ?? new SimulatedKycProvider();
  // The service's own address, for links it answers (sandbox KYC pages); the bound port is known at listen.
  let ownBaseUrl = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${config.port}`;
  const kyc = new KycLifecycle({
    users: repositories.users,
    archive: repositories.kycSessionArchive,
    settings,
    relay,
    provider: kycProvider,
    jobs,
    clock,
    baseUrl: () => ownBaseUrl,
    onBackgroundError: backgroundError,
  });
  // Verification codes are derived and checked with a key every process of a deployment shares: the admin token's.
  const verificationCodes = new VerificationCodes(createHmac("sha256", options.adminToken).update("svc phone verification codes").digest());

  const webhookEndpoints = new WebhookEndpointsServiceImpl({
    endpoints: repositories.webhookEndpoints,
    deliveries: repositories.webhookDeliveries,
    events: repositories.events,
    clock,
    send: webhookSend,
    dispatch: (id) => webhooks.dispatch(id),
    recovery: webhooks.recovery,
  });
  // One change stream per process, opened with the first event stream, fanned out to all of them.
  const liveEvents = new LiveEvents(repositories.events, {
    changeStreams: replicaSet,
    onError: (error) => onError(error, "live events"),
  });
  // The same for the request log's tails.
  const liveRequestLogs = new LiveRequestLogs(repositories.requestLogs, {
    changeStreams: replicaSet,
    onError: (error) => onError(error, "live request logs"),
  });
  const money = { ledger, transactions: repositories.transactions, wallets: repositories.walletLedger, settings, clock };
  const services: RegisteredService[] = [
    {
      service: UsersService,
      visibility: "public",
      implementation: new UsersServiceImpl({ users: repositories.users, settings, relay, wallets, clock, onBackgroundError: backgroundError }),
    },
    {
      service: PhoneVerificationService,
      visibility: "public",
      implementation: new PhoneVerificationServiceImpl({ users: repositories.users, sms: smsSender, codes: verificationCodes, clock }),
    },
    { service: KycSessionsService, visibility: "public", implementation: new KycSessionsServiceImpl(kyc) },
    { service: SandboxService, visibility: "public", implementation: new SandboxServiceImpl(kyc) },
    { service: EventsService, visibility: "public", implementation: new EventsServiceImpl({ events: repositories.events, live: liveEvents, clock }) },
    { service: RequestLogsService, visibility: "public", implementation: new RequestLogsServiceImpl(repositories.requestLogs, liveRequestLogs) },
    { service: TransactionsService, visibility: "public", implementation: new TransactionsServiceImpl(money) },
    { service: SandboxTransactionsService, visibility: "public", implementation: new SandboxTransactionsServiceImpl(money) },
    {
      service: WebhookEndpointsService,
      visibility: "public",
      implementation: webhookEndpoints,
      replays: { createWebhookEndpoint: (response, context) => webhookEndpoints.replayedCreation(response, context) },
    },
    {
      service: AdminService,
      visibility: "internal",
      implementation: new AdminServiceImpl({ ...repositories, settings, tenancy, lifecycle, kyc, relay, ledger, clock }),
      // A new key's secret is shown once and never stored: a replay answers the key without it.
      kept: { createApiKey: (response: CreateApiKeyResponse) => create(CreateApiKeyResponseSchema, { ...response, secret: "" }) },
    },
  ];
  const registry = new ServiceRegistry(services);
  const accessCheck = methodAccessCheck(async (projectId, setting) => (await settings.project(projectId))?.[setting] === true);
  const observed = observabilityInterceptor(metrics, logger);
  // Calls are recorded off their path: a write that fails is logged here and costs the call nothing.
  const requestLogWriter = new RequestLogWriter(repositories.requestLogs, {
    ...DEFAULT_REQUEST_LOG_WRITER,
    onError: (error) => onError(error, "request log"),
  });
  const pipeline = new CallPipeline({
    gate,
    idempotency,
    registry,
    onInternalError: (error, requestId) => logger.error({ err: error, request_id: requestId }, "unexpected failure"),
    checkAccess: accessCheck,
    ...(options.recordRequests === false ? {} : { requestLog: requestLogWriter }),
    clock,
    streamSlots: new StreamSlots(config.maxStreamsPerKey),
  });
  const publicInterceptors = [observed, pipelineInterceptor(pipeline, "api-key")];
  const adminInterceptors = [observed, adminInterceptor(options.adminToken), pipelineInterceptor(pipeline, "admin")];
  const interceptorsFor = (s: RegisteredService): Interceptor[] => (s.visibility === "public" ? publicInterceptors : adminInterceptors);
  // gRPC's health and reflection services, for probes and tools: no key, logged like every call.
  const served = [...services.map((s) => s.service), Health, ServerReflectionV1, ServerReflectionV1alpha];
  const health = new HealthStatus(served);
  const reflection = reflectionServices(
    [...services.filter((s) => s.visibility === "public").map((s) => s.service), Health, ServerReflectionV1, ServerReflectionV1alpha],
    services.filter((s) => s.visibility !== "public").map((s) => s.service),
    (header) => adminTokenMatches(header.get("authorization") ?? "", `Bearer ${options.adminToken}`),
  );
  const infrastructure: RpcService[] = [
    { service: Health, implementation: healthService(health), interceptors: [observed] },
    { service: ServerReflectionV1, implementation: reflection.v1, interceptors: [observed] },
    { service: ServerReflectionV1alpha, implementation: reflection.v1alpha, interceptors: [observed] },
  ];
  const servedRpc = rpcServices(registry, interceptorsFor, infrastructure);

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
    surface: role === "worker" ? "operations" : "public",
    logger,
    metrics,
    dashboard: {
      registry,
      sessions: dashboardSessions,
      queries: new ConsoleQueries(database.db),
      authenticator,
      rateLimiter,
      adminToken: options.adminToken,
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
  const relaySweeper = new RelaySweeper(relay, jobs, { intervalMs: timings.sweepIntervalMs, staleAfterMs: timings.sweepStaleAfterMs });

  return {
    http,
    grpc,
    repositories,
    tenancy,
    relaySweeper,
    jobs,
    liveEvents,
    liveRequestLogs,
    custodian,
    smsSender,
    kycProvider,
    async listen(ports = {}) {
      // Workers run the jobs, the relay sweeper and deliveries; API processes only enqueue.
      if (role !== "api") {
        // The sweeps are recurring jobs, run by one process at a time.
        await Promise.all([relaySweeper.start(), ledger.start(timings.sweepIntervalMs, timings.sweepStaleAfterMs)]);
        await jobs.start();
      }
      await http.listen({ port: ports.http ?? config.port, host: config.host });
      const httpPort = (http.server.address() as { port: number }).port;
      const grpcPort = role === "worker" ? 0 : await grpc.listen(ports.grpc ?? config.grpcPort, config.host);
      for (const port of [httpPort, grpcPort]) if (port > 0) refusedLoopbackPorts.add(port);
      ownBaseUrl = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${httpPort}`;
      ready = true;
      health.serving();
      return { httpPort, grpcPort };
    },
    async close() {
      ready = false;
      // One deadline for the whole drain, the grace period from now: Connect and gRPC calls still running then
      // are aborted (server/), and so are delivery attempts, whatever the webhook time-out (recorded as failed,
      // retried on schedule). What follows it is a few writes; main.ts exits regardless a little later.
      const drainEnd = performance.now() + timings.shutdownGraceMs;
      // Probes and load balancers watching grpc.health.v1 hear NOT_SERVING before the servers stop accepting.
      health.drain();
      // Open event streams end now, cleanly: their clients reconnect (elsewhere) and resume with the last id seen.
      await Promise.all([liveEvents.drain(), liveRequestLogs.drain()]);
      await Promise.all([http.close(), grpc.close(timings.shutdownGraceMs)]);
      // Taking jobs stops at once; the delivery runs in flight are cut at the end of the grace period and save
      // their retry times before the job queue's stop answers.
      await Promise.all([webhooks.stop(Math.max(0, drainEnd - performance.now())), jobs.stop(), requestLogWriter.flush()]);
    },
  };
}
