// A whole Svc (HTTP and gRPC servers, jobs) on ephemeral ports over a fresh database, with the Default project
// bootstrapped, for tests that go through the public interfaces.
import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { AdminService } from "../../gen/svc/admin/v1/admin_pb.ts";
import { createApp, type App, type AppOptions, type AppTimings } from "../../src/app.ts";
import { bootstrapDefaultProject } from "../../src/bootstrap.ts";
import { loadConfig, type Config } from "../../src/config.ts";
import type { Clock } from "../../src/domain/clock.ts";
import type { Database } from "../../src/store/database.ts";
import { connectDatabase } from "../../src/store/database.ts";
import type { WalletCustodian } from "../../src/wallets/custodian.ts";
import { freshDatabaseUri } from "./database.ts";
import { testLogger } from "./log-capture.ts";
import { recordResponse } from "./response-log.ts";
import { RestClient } from "./rest-client.ts";
import { rememberSensitive, rememberSensitiveFields } from "./sensitive-values.ts";

export interface TestServiceOptions {
  env?: Record<string, string>;
  clock?: Clock;
  custodian?: WalletCustodian;
  timings?: Partial<AppTimings>;
  /** Share another service's database (several instances, one database). */
  databaseUri?: string;
  webhookLookup?: AppOptions["webhookLookup"];
  webhookMaxPendingPerEndpoint?: number;
  /** Another SMS provider than the simulated one. */
  smsSender?: AppOptions["smsSender"];
  /** The HTTP port to listen on (a service started again where its clients expect it); default a free one. */
  httpPort?: number;
}

export interface RestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RestRequest {
  key?: string | null;
  body?: unknown;
  /** Sent as is, instead of JSON.stringify(body). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

export interface TestService {
  app: App;
  config: Config;
  database: Database;
  databaseUri: string;
  baseUrl: string;
  grpcAddress: string;
  adminToken: string;
  organizationId: string;
  projectId: string;
  sandboxKey: string;
  liveKey: string;
  admin: Client<typeof AdminService>;
  request<T = any>(method: string, path: string, init?: RestRequest): Promise<RestResponse<T>>;
  stop(): Promise<void>;
}

export const TEST_ADMIN_TOKEN = "adm_test_token_for_the_suite";

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const databaseUri = options.databaseUri ?? (await freshDatabaseUri());
  const config = loadConfig({ HOST: "127.0.0.1", PORT: "0", GRPC_PORT: "0", MONGODB_URI: databaseUri, ...options.env });
  const database = await connectDatabase(databaseUri);
  const logger = testLogger();
  const app = await createApp({
    config,
    database,
    adminToken: TEST_ADMIN_TOKEN,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.custodian ? { custodian: options.custodian } : {}),
    ...(options.smsSender ? { smsSender: options.smsSender } : {}),
    ...(options.webhookLookup ? { webhookLookup: options.webhookLookup } : {}),
    ...(options.webhookMaxPendingPerEndpoint !== undefined ? { webhookMaxPendingPerEndpoint: options.webhookMaxPendingPerEndpoint } : {}),
    // Agenda keeps a timer of half the lock lifetime after each job run: a short lock (the tests' jobs take
    // milliseconds) lets the process exit soon after the last service stops.
    timings: { jobPollMs: 200, jobLockLifetimeMs: 4000, sweepIntervalMs: 200, sweepStaleAfterMs: 1000, ...options.timings },
    logger,
    onError: (error, context) => {
      logger.error({ err: error, context }, "unexpected failure");
      if (process.env.SVC_TEST_VERBOSE) console.error(`[svc ${context}]`, error);
    },
  });
  const boot = await bootstrapDefaultProject({ tenancy: app.tenancy, ...app.repositories }, {});
  for (const secret of [boot.sandboxKey, boot.liveKey, TEST_ADMIN_TOKEN]) rememberSensitive(secret);
  const { httpPort, grpcPort } = await app.listen({ http: options.httpPort ?? 0, grpc: 0 });
  const baseUrl = `http://127.0.0.1:${httpPort}`;
  const withAdminToken: Interceptor = (next) => async (req) => {
    req.header.set("authorization", `Bearer ${TEST_ADMIN_TOKEN}`);
    const response = await next(req);
    if (!response.stream) rememberSensitiveFields(response.message);
    return response;
  };
  const admin = createClient(AdminService, createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors: [withAdminToken] }));

  const rest = new RestClient(baseUrl);
  const service: TestService = {
    app,
    config,
    database,
    databaseUri,
    baseUrl,
    grpcAddress: `127.0.0.1:${grpcPort}`,
    adminToken: TEST_ADMIN_TOKEN,
    organizationId: boot.organizationId,
    projectId: boot.projectId,
    sandboxKey: boot.sandboxKey!,
    liveKey: boot.liveKey!,
    admin,
    async request(method, path, init = {}) {
      const headers: Record<string, string> = { ...init.headers };
      rememberSensitiveFields(init.body);
      const key = init.key === undefined ? service.sandboxKey : init.key;
      if (key !== null) headers.authorization ??= `Bearer ${key}`;
      let body: string | Buffer | undefined = init.rawBody;
      if (body === undefined && init.body !== undefined) body = JSON.stringify(init.body);
      if (body !== undefined) headers["content-type"] ??= "application/json";
      const response = await rest.send(method, path, headers, body);
      const text = response.text;
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      rememberSensitiveFields(parsed);
      const result = { status: response.status, headers: response.headers, body: parsed as never, text };
      recordResponse(method, path, result);
      return result;
    },
    async stop() {
      rest.close();
      await app.close();
      await database.close();
    },
  };
  return service;
}
