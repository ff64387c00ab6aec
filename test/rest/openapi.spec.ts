import { Validator } from "@seriousme/openapi-schema-validator";
import { SandboxTransactionsService, TransactionsService } from "../../gen/svc/v1/transactions_pb.ts";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { expect } from "chai";
import { EventsService } from "../../gen/svc/v1/events_pb.ts";
import { RequestLogsService } from "../../gen/svc/v1/request_logs_pb.ts";
import { KycSessionsService, PhoneVerificationService, SandboxService } from "../../gen/svc/v1/identity_pb.ts";
import { UsersService } from "../../gen/svc/v1/users_pb.ts";
import { WebhookEndpointsService } from "../../gen/svc/v1/webhook_endpoints_pb.ts";
import { LATEST_API_VERSION } from "../../src/domain/api-version.ts";
import { buildOpenApiDocument } from "../../src/rest/openapi/document.ts";
import { restRouteOf, type RestRoute } from "../../src/api/rest-route-table.ts";
import { PUBLIC_API } from "../../src/api/public-api.ts";
import { bodyMembers } from "../../src/rest/request-decoder.ts";
import { expectError } from "../support/errors.ts";
import { OpenApiContract } from "../support/openapi-contract.ts";
import type { RecordedResponse } from "../support/response-log.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { createEndpoint, createUser, publishKycApproved, startWebhookTestService } from "../webhooks/support/fixtures.ts";
import { WebhookReceiver } from "../webhooks/support/receiver.ts";

const FIVE_HEADERS = ["x-request-id", "x-api-version", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"];
const PUBLIC_ROUTES = [
  UsersService,
  PhoneVerificationService,
  KycSessionsService,
  SandboxService,
  EventsService,
  RequestLogsService,
  TransactionsService,
  SandboxTransactionsService,
  WebhookEndpointsService,
  // Streaming methods (StreamEvents, TailRequestLogs) have no REST route.
].flatMap((service) => service.methods.flatMap((method) => restRouteOf(service, method) ?? []));

describe("GET /v1/openapi.json", () => {
  let svc: TestService;
  let document: any;
  before(async () => {
    svc = await startTestService();
    document = (await svc.request("GET", "/v1/openapi.json", { key: null })).body;
  });
  after(async () => {
    await svc.stop();
  });

  it("is a valid OpenAPI 3.1 document for API version 2026-11-20", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).to.deep.equal([]);
    expect(result.valid).to.equal(true);
    expect(validator.version).to.equal("3.1");
    expect(document.info.version)
      .to.equal(LATEST_API_VERSION)
      .and.to.match(/^\d{4}-\d{2}-\d{2}$/);
    expect(document.info.title).to.be.a("string").and.not.empty;
    expect(document.servers).to.be.an("array").that.is.not.empty;
    expect(document.components.securitySchemes.apiKey).to.include({ type: "http", scheme: "bearer" });
    expect(document.security).to.deep.equal([{ apiKey: [] }]);
  });

  it("describes exactly the /v1 routes the server serves, itself without a key", () => {
    const served = PUBLIC_ROUTES.filter((route) => svc.app.http.hasRoute({ method: route.httpMethod, url: route.fastifyPath }));
    expect(served.length, "public routes served").to.be.greaterThan(0);
    const operations = Object.entries<Record<string, unknown>>(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const expected = [
      "GET /v1/openapi.json",
      "HEAD /v1/openapi.json",
      "OPTIONS /v1/openapi.json",
      ...served.map((route: RestRoute) => `${route.httpMethod} ${route.pathTemplate}`),
    ];
    expect(operations).to.have.members(expected);
    expect(document.paths["/v1/openapi.json"].get.security).to.deep.equal([]);
  });

  it("answers without a key, as JSON, with the five headers", async () => {
    const response = await svc.request("GET", "/v1/openapi.json", { key: null });
    expect(response.status).to.equal(200);
    expect(response.headers.get("content-type")).to.match(/^application\/json/);
    for (const name of FIVE_HEADERS) expect(response.headers.get(name), name).to.be.a("string").and.not.empty;
    expect(response.headers.get("x-api-version")).to.equal(LATEST_API_VERSION);
  });

  it("answers HEAD with GET's headers and no body, and a CORS preflight with 204, so browser tools can load it", async () => {
    const get = await svc.request("GET", "/v1/openapi.json", { key: null, headers: { origin: "https://docs.example.com" } });
    expect(get.headers.get("access-control-allow-origin")).to.equal("*");
    expect(get.headers.get("access-control-expose-headers")).to.include("X-RateLimit-Remaining");
    const head = await svc.request("HEAD", "/v1/openapi.json", { key: null });
    expect(head.status).to.equal(200);
    expect(head.text).to.equal("");
    expect(head.headers.get("content-type")).to.match(/^application\/json/);
    expect(head.headers.get("content-length")).to.equal(String(Buffer.byteLength(get.text)));
    expect(head.headers.get("access-control-allow-origin")).to.equal("*");
    for (const name of FIVE_HEADERS) expect(head.headers.get(name), name).to.be.a("string").and.not.empty;
    const preflight = await svc.request("OPTIONS", "/v1/openapi.json", {
      key: null,
      headers: { origin: "https://docs.example.com", "access-control-request-method": "GET", "access-control-request-headers": "svc-version" },
    });
    expect(preflight.status).to.equal(204);
    expect(preflight.headers.get("access-control-allow-origin")).to.equal("*");
    expect(preflight.headers.get("access-control-allow-methods")).to.equal("GET, HEAD, OPTIONS");
    expect(preflight.headers.get("access-control-allow-headers")).to.equal("Svc-Version");
    for (const name of FIVE_HEADERS) expect(preflight.headers.get(name), name).to.be.a("string").and.not.empty;
  });

  it("keeps the API routes without CORS: no Access-Control-* header, OPTIONS and HEAD are route_not_found", async () => {
    const listed = await svc.request("GET", "/v1/events", { headers: { origin: "https://docs.example.com" } });
    expect(listed.status).to.equal(200);
    expect([...listed.headers.keys()].filter((name) => name.startsWith("access-control-"))).to.deep.equal([]);
    const preflight = await svc.request("OPTIONS", "/v1/users", {
      key: null,
      headers: { origin: "https://docs.example.com", "access-control-request-method": "POST" },
    });
    expectError(preflight, 404, "invalid_request_error", "route_not_found");
    expect(preflight.headers.get("access-control-allow-origin")).to.equal(null);
    expect((await svc.request("HEAD", "/v1/events")).status).to.equal(404);
  });

  it("a refused request for the document can be read from another origin too", async () => {
    const response = await svc.request("GET", "/v1/openapi.json", { key: null, headers: { "svc-version": "1999-01-01" } });
    expectError(response, 400, "invalid_request_error", "unsupported_version");
    expect(response.headers.get("access-control-allow-origin")).to.equal("*");
  });

  it("counts each request against the client address", async () => {
    const first = await svc.request("GET", "/v1/openapi.json", { key: null });
    const second = await svc.request("GET", "/v1/openapi.json", { key: null });
    expect(Number(second.headers.get("x-ratelimit-remaining"))).to.equal(Number(first.headers.get("x-ratelimit-remaining")) - 1);
  });

  it("refuses a Svc-Version that does not exist", async () => {
    const response = await svc.request("GET", "/v1/openapi.json", { key: null, headers: { "svc-version": "1999-01-01" } });
    expectError(response, 400, "invalid_request_error", "unsupported_version");
  });

  it("answers 429 with Retry-After once the client address has used its quota", async () => {
    const limited = await startTestService({ env: { SVC_RATE_LIMIT: "2" } });
    try {
      await limited.request("GET", "/v1/openapi.json", { key: null });
      await limited.request("GET", "/v1/openapi.json", { key: null });
      const refused = await limited.request("GET", "/v1/openapi.json", { key: null });
      expectError(refused, 429, "rate_limit_error", "rate_limit_exceeded");
      expect(Number(refused.headers.get("retry-after"))).to.be.at.least(1);
    } finally {
      await limited.stop();
    }
  });

  it("documents, for each body, exactly the fields the request decoder accepts", () => {
    const full = buildOpenApiDocument(PUBLIC_API);
    // The routes as described (PUBLIC_API): a description may name body members otherwise than their fields.
    for (const route of PUBLIC_API.map((m) => m.route).filter((r) => r.body !== "")) {
      const operation = full.paths[route.pathTemplate]![route.httpMethod.toLowerCase()]!;
      const schemaRef = (operation.requestBody as any)?.content["application/json"].schema.$ref as string | undefined;
      const documented = schemaRef ? Object.keys((full.components.schemas[schemaRef.split("/").pop()!] as any).properties) : [];
      expect(documented, `${route.httpMethod} ${route.pathTemplate}`).to.have.members(bodyMembers(route));
    }
    expect(bodyMembers(PUBLIC_API.find((m) => m.method.localName === "createWebhookEndpoint")!.route)).to.have.members([
      "url",
      "event_types",
      "description",
    ]);
  });
});

describe("OpenAPI request schemas", () => {
  const document = buildOpenApiDocument(PUBLIC_API);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ ...document, $id: "urn:svc:request-schemas" });
  const accepts = (schema: string, body: unknown) => ajv.validate({ $ref: `urn:svc:request-schemas#/components/schemas/${schema}` }, body);

  it("has no jsonSchemaDialect, which switches off Prism's response validation", () => {
    expect(document).not.to.have.property("jsonSchemaDialect");
  });

  it("accepts null where the server takes it as absent (creations), and refuses it where the server does", () => {
    expect(accepts("CreateUserRequest", { phone: "+14155550100", email: null, external_id: null, terms_acceptance: null })).to.equal(true);
    expect(accepts("CreateUserRequest", { phone: null })).to.equal(false);
    expect(accepts("CreateWebhookEndpointRequest", { url: "https://hooks.example.com/x", event_types: null, description: null })).to.equal(true);
    expect(accepts("UpdateWebhookEndpointRequest", { description: null })).to.equal(false);
    expect(accepts("UpdateUserRequest", { email: null })).to.equal(true);
  });

  it("declares the body of every route that reads one: routes without fields take {} (EmptyBody)", () => {
    for (const route of PUBLIC_ROUTES.filter((r) => r.body !== "")) {
      const operation = document.paths[route.pathTemplate]![route.httpMethod.toLowerCase()]!;
      expect(operation.requestBody, `${route.httpMethod} ${route.pathTemplate}`).to.be.an("object");
    }
    expect(accepts("EmptyBody", {})).to.equal(true);
    expect(accepts("EmptyBody", { message: "hi" })).to.equal(false);
  });
});

describe("OpenAPI webhooks entry", () => {
  it("describes the deliveries a receiver gets: user, kyc and webhook.test events with their headers", async () => {
    const svc = await startWebhookTestService();
    const receiver = await WebhookReceiver.start();
    try {
      const contract = new OpenApiContract((await svc.request("GET", "/v1/openapi.json", { key: null })).body);
      const endpoint = await createEndpoint(svc, { url: receiver.url() });
      const user = await createUser(svc);
      await publishKycApproved(svc, user.id);
      const test = await svc.request("POST", `/v1/webhook-endpoints/${endpoint.id}/test`);
      expect(test.status, test.text).to.equal(200);
      const types = () => new Set(receiver.received.map((r) => r.body?.type));
      await receiver.waitUntil(() => ["user.created", "kyc.approved", "webhook.test"].every((t) => types().has(t)));
      for (const delivery of receiver.received) {
        expect(contract.webhookDeliveryBreaches(delivery), `${delivery.body?.type}: ${delivery.rawBody}`).to.deep.equal([]);
      }
      const { data: _data, ...withoutData } = receiver.received[0]!.body;
      expect(contract.webhookDeliveryBreaches({ ...receiver.received[0]!, body: withoutData })).to.have.length(1);
    } finally {
      await receiver.close();
      await svc.stop();
    }
  });
});

describe("OpenAPI contract check", () => {
  let contract: OpenApiContract;
  before(() => {
    contract = new OpenApiContract(buildOpenApiDocument(PUBLIC_API));
  });

  const headers = {
    "x-request-id": "req_abc123",
    "x-api-version": LATEST_API_VERSION,
    "x-ratelimit-limit": "6000",
    "x-ratelimit-remaining": "5999",
    "x-ratelimit-reset": "42",
  };
  const user = {
    id: "123456789",
    object: "user",
    phone: "+14155550100",
    external_id: null,
    verified: true,
    kyc_status: "none",
    suspended: false,
    livemode: false,
    wallet_status: "ready",
    created_at: "2026-11-20T10:00:00.000Z",
    last_login_at: null,
  };
  const recorded = (overrides: Partial<RecordedResponse>): RecordedResponse => ({
    method: "POST",
    path: "/v1/users",
    status: 201,
    contentType: "application/json; charset=utf-8",
    headers,
    body: user,
    ...overrides,
  });
  const notFound = { error: { type: "invalid_request_error", code: "route_not_found", message: "No route.", request_id: "req_abc123" } };

  it("accepts a response that matches its operation", () => {
    expect(contract.breachesOfAll([recorded({})])).to.deep.equal([]);
  });

  it("reports a body that breaks the schema, with path, status and error", () => {
    const { phone: _phone, ...withoutPhone } = user;
    const [breach, ...others] = contract.breachesOfAll([recorded({ body: { ...withoutPhone, profile: null } })]);
    expect(others).to.deep.equal([]);
    expect(breach).to.include("POST /v1/users -> 201").and.include("phone").and.include("additional properties");
  });

  it("reports a status the operation does not document, and a missing header", () => {
    expect(contract.breachesOfAll([recorded({ status: 202 })])).to.have.length(1);
    const { "x-ratelimit-reset": _reset, ...fourHeaders } = headers;
    expect(contract.breachesOfAll([recorded({ headers: fourHeaders })])[0]).to.include("X-RateLimit-Reset is missing");
  });

  it("reports an error code the status does not document for the operation", () => {
    const conflict = { error: { type: "invalid_request_error", code: "webhook_endpoint_exists", message: "x", request_id: "req_abc123" } };
    expect(contract.breachesOfAll([recorded({ status: 409, body: conflict })])).to.have.length(1);
  });

  it("reports an error whose request_id is not the X-Request-Id header", () => {
    const mismatched = { error: { ...notFound.error, request_id: "req_other" } };
    expect(contract.breachesOfAll([recorded({ path: "/v1/nothing", status: 404, body: mismatched })])[0]).to.include("differs from X-Request-Id");
  });

  it("holds unmatched /v1 routes to route_not_found and skips paths outside /v1", () => {
    expect(contract.breachesOfAll([recorded({ path: "/v1/nothing", status: 404, body: notFound })])).to.deep.equal([]);
    expect(contract.breachesOfAll([recorded({ path: "/v1/nothing", status: 500, body: notFound })])).to.have.length(1);
    expect(contract.breachesOfAll([recorded({ path: "/healthz", status: 200, body: { status: "ok" } })])).to.deep.equal([]);
  });
});
