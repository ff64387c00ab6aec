// REST conventions of docs/contract.md beyond single error codes: the order in which checks apply, the
// five headers on every kind of response, and 500s that tell nothing about the failure inside.
import { expect } from "chai";
import { ERROR_CATALOGUE } from "../../src/domain/errors.ts";
import { expectError } from "../support/errors.ts";
import { bearer, grpc, GrpcTestClient } from "../support/grpc-client.ts";
import { expectStandardHeaders } from "../support/headers.ts";
import { createKey } from "../support/tenancy.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

const OVERSIZED = JSON.stringify({ phone: "+14155550100", email: `${"a".repeat(70_000)}@example.com` });
const BROKEN_JSON = '{"phone": ';

describe("REST conventions", () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  describe("check order: route, body size, authentication, version, rate limit, JSON, idempotency key, validation, lookups", () => {
    /** A sandbox key whose one-request quota is already used up. */
    async function exhaustedKey(): Promise<string> {
      const { secret } = await createKey(svc, svc.projectId, { rateLimit: 1 });
      expect((await svc.request("GET", "/v1/events", { key: secret })).status).to.equal(200);
      return secret;
    }

    it("an unknown route with an oversized body is route_not_found", async () => {
      expectError(await svc.request("POST", "/v1/nothing", { rawBody: OVERSIZED }), 404, "invalid_request_error", "route_not_found");
    });

    it("an unknown route with a broken JSON body is route_not_found", async () => {
      expectError(await svc.request("POST", "/v1/nothing", { rawBody: BROKEN_JSON }), 404, "invalid_request_error", "route_not_found");
    });

    it("a body of exactly 64 KiB is read: its unknown field is a validation_error, not payload_too_large", async () => {
      const prefix = '{"phone":"+14155550100","padding":"';
      const rawBody = `${prefix}${"p".repeat(64 * 1024 - prefix.length - 2)}"}`;
      expect(Buffer.byteLength(rawBody)).to.equal(64 * 1024);
      expectError(await svc.request("POST", "/v1/users", { rawBody }), 422, "invalid_request_error", "validation_error", "padding");
      expectError(await svc.request("POST", "/v1/users", { rawBody: `${rawBody} ` }), 413, "invalid_request_error", "payload_too_large");
    });

    it("an oversized body without a key is payload_too_large", async () => {
      expectError(await svc.request("POST", "/v1/users", { key: null, rawBody: OVERSIZED }), 413, "invalid_request_error", "payload_too_large");
    });

    it("an invalid key with a broken JSON body is invalid_api_key", async () => {
      const response = await svc.request("POST", "/v1/users", { key: `svc_test_${"0".repeat(30)}`, rawBody: BROKEN_JSON });
      expectError(response, 401, "authentication_error", "invalid_api_key");
    });

    it("the one existing Svc-Version is accepted, and X-API-Version names it", async () => {
      const response = await svc.request("GET", "/v1/events", { headers: { "svc-version": "2026-11-20" } });
      expect(response.status).to.equal(200);
      expect(response.headers.get("x-api-version")).to.equal("2026-11-20");
    });

    it("a missing key with an unknown Svc-Version is missing_api_key", async () => {
      const response = await svc.request("GET", "/v1/events", { key: null, headers: { "svc-version": "1999-12-31" } });
      expectError(response, 401, "authentication_error", "missing_api_key");
    });

    it("an unknown Svc-Version with a valid key beats an exhausted rate limit", async () => {
      const key = await exhaustedKey();
      const response = await svc.request("GET", "/v1/events", { key, headers: { "svc-version": "1999-12-31" } });
      expectError(response, 400, "invalid_request_error", "unsupported_version");
    });

    it("an exhausted rate limit beats a broken JSON body", async () => {
      const response = await svc.request("POST", "/v1/users", { key: await exhaustedKey(), rawBody: BROKEN_JSON });
      expectError(response, 429, "rate_limit_error", "rate_limit_exceeded");
    });

    it("a broken JSON body beats an invalid Idempotency-Key", async () => {
      const response = await svc.request("POST", "/v1/users", { rawBody: BROKEN_JSON, headers: { "idempotency-key": "" } });
      expectError(response, 400, "invalid_request_error", "invalid_json");
    });

    it("an invalid Idempotency-Key beats an invalid field", async () => {
      const response = await svc.request("POST", "/v1/users", { body: { phone: 42 }, headers: { "idempotency-key": "x".repeat(300) } });
      expectError(response, 400, "idempotency_error", "idempotency_key_invalid");
    });

    it("an invalid field beats the lookup of an unknown user", async () => {
      const response = await svc.request("PATCH", "/v1/users/999999999", { body: { email: 5 } });
      expectError(response, 422, "invalid_request_error", "validation_error", "email");
    });
  });

  describe("how the key is sent", () => {
    it("refuses Stripe-style Basic authentication (curl -u key:) with 401 invalid_api_key saying to send it as Bearer", async () => {
      const { execFile } = await import("node:child_process");
      const output = await new Promise<string>((resolve, reject) =>
        execFile("curl", ["-s", "-u", `${svc.sandboxKey}:`, `${svc.baseUrl}/v1/events`], (error, stdout) =>
          error ? reject(error) : resolve(stdout),
        ),
      );
      const body = JSON.parse(output);
      expect(body.error).to.deep.include({ type: "authentication_error", code: "invalid_api_key" });
      expect(body.error.message).to.include("Authorization: Bearer <key>").and.include("Basic");
      const bare = await svc.request("GET", "/v1/events", { headers: { authorization: svc.sandboxKey } });
      expectError(bare, 401, "authentication_error", "invalid_api_key");
      expect(bare.body.error.message).to.include("Authorization: Bearer <key>");
      // A Bearer credential that is not a key keeps the plain message.
      const malformed = await svc.request("GET", "/v1/events", { headers: { authorization: "Bearer nope" } });
      expect(malformed.body.error.message).not.to.include("Basic");
    });
  });

  describe("the five headers", () => {
    it("are on REST successes, creations included", async () => {
      const created = await svc.request("POST", "/v1/users", { body: { phone: "+14155550111" } });
      expect(created.status).to.equal(201);
      expectStandardHeaders(created.headers, "201");
      const read = await svc.request("GET", `/v1/users/${created.body.id}`);
      expect(read.status).to.equal(200);
      expectStandardHeaders(read.headers, "200");
      expect(read.headers.get("x-request-id")).not.to.equal(created.headers.get("x-request-id"));
    });

    it("are on 404s outside /v1 and on lookups that find nothing", async () => {
      expectStandardHeaders((await svc.request("GET", "/", { key: null })).headers, "GET /");
      expectStandardHeaders((await svc.request("GET", "/v1/users/999999999")).headers, "user_not_found");
    });

    it("are on Connect responses, successes and errors", async () => {
      const created = await svc.request("POST", "/v1/users", { body: { phone: "+14155550112" } });
      const ok = await svc.request("POST", "/svc.v1.UsersService/GetUser", { body: { id: created.body.id } });
      expect(ok.status).to.equal(200);
      expect(ok.body.user.id).to.equal(created.body.id);
      expectStandardHeaders(ok.headers, "Connect 200");
      const failed = await svc.request("POST", "/svc.v1.UsersService/GetUser", { key: null, body: { id: created.body.id } });
      expect(failed.status).to.equal(401);
      expect(failed.body.code).to.equal("unauthenticated");
      expectStandardHeaders(failed.headers, "Connect 401");
    });

    it("count the quota down, per key", async () => {
      const { secret } = await createKey(svc, svc.projectId, { rateLimit: 50 });
      const remaining: string[] = [];
      for (let i = 0; i < 3; i++) {
        const response = await svc.request("GET", "/v1/events", { key: secret });
        expect(response.headers.get("x-ratelimit-limit")).to.equal("50");
        remaining.push(response.headers.get("x-ratelimit-remaining")!);
      }
      expect(remaining).to.deep.equal(["49", "48", "47"]);
    });
  });
});

describe("internal errors", () => {
  let svc: TestService;
  let client: GrpcTestClient;
  let userId: string;
  before(async () => {
    svc = await startTestService();
    client = new GrpcTestClient(svc.grpcAddress);
    userId = (await svc.request("POST", "/v1/users", { body: { phone: "+14155550113" } })).body.id;
    // The database goes away under a running service: every call now fails inside.
    await svc.database.client.close();
  });
  after(async () => {
    client.close();
    await svc.app.close();
  });

  it("answer 500 internal_error over REST with the generic message and no driver details", async () => {
    const response = await svc.request("GET", `/v1/users/${userId}`);
    expectError(response, 500, "api_error", "internal_error");
    expect(response.body.error.message).to.equal(ERROR_CATALOGUE.internal_error.message);
    expect(Object.keys(response.body)).to.deep.equal(["error"]);
    expect(response.text).not.to.match(/mongo|connect(ed)?\b|client|stack/i);
    expectStandardHeaders(response.headers, "500");
  });

  it("answer INTERNAL with internal_error over gRPC, with the generic message", async () => {
    const outcome = await client.call("UsersService", "GetUser", { id: userId }, bearer(svc.sandboxKey));
    if (outcome.ok) expect.fail("the call succeeded with the database closed");
    expect(grpc.status[outcome.failure.code]).to.equal("INTERNAL");
    expect(outcome.failure.info.reason).to.equal("internal_error");
    expect(decodeURIComponent(outcome.failure.details)).to.equal(ERROR_CATALOGUE.internal_error.message);
  });
});
