// Edges of REST requests: path parameters of any length, text that is not text (invalid UTF-8, lone surrogates,
// control characters), media types, absolute-form request targets, the birth_date floor.
import { expect } from "chai";
import { expectError } from "../support/errors.ts";
import { rawHttpExchange } from "../support/raw-http.ts";
import { bearer, grpc, GrpcTestClient } from "../support/grpc-client.ts";
import { uniquePhone } from "../support/phones.ts";
import { createKey } from "../support/tenancy.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

describe("REST request edges", () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  describe("long path parameters", () => {
    for (const length of [101, 300, 2048, 8000]) {
      it(`a ${length}-character id reaches its route and gets the route's own 404`, async () => {
        const id = "a".repeat(length);
        expectError(await svc.request("GET", `/v1/users/${id}`), 404, "invalid_request_error", "user_not_found");
        expectError(await svc.request("GET", `/v1/users/${id}/wallets`), 404, "invalid_request_error", "user_not_found");
        expectError(await svc.request("PATCH", `/v1/users/${id}`, { body: {} }), 404, "invalid_request_error", "user_not_found");
        expectError(await svc.request("GET", `/v1/events/${id}`), 404, "invalid_request_error", "event_not_found");
        expectError(await svc.request("GET", `/v1/webhook-endpoints/${id}`), 404, "invalid_request_error", "webhook_endpoint_not_found");
        expectError(await svc.request("DELETE", `/v1/webhook-endpoints/${id}`), 404, "invalid_request_error", "webhook_endpoint_not_found");
      });
    }
  });

  describe("absolute-form request targets", () => {
    it("lists report the path only, never the host the client named", async () => {
      const user = await svc.request("POST", "/v1/users", { body: { phone: "+14155550191" } });
      const auth = `Authorization: Bearer ${svc.sandboxKey}\r\n`;
      for (const target of [
        `http://evil.example/v1/users/${user.body.id}/wallets`,
        `HTTPS://evil.example:8443/v1/users/${user.body.id}/wallets?limit=5`,
      ]) {
        const answer = await rawHttpExchange(svc.baseUrl, `GET ${target} HTTP/1.1\r\nHost: evil.example\r\n${auth}Connection: close\r\n\r\n`);
        expect(answer.status, target).to.equal(200);
        expect(answer.body.url).to.equal(`/v1/users/${user.body.id}/wallets`);
      }
      const events = await rawHttpExchange(
        svc.baseUrl,
        `GET http://evil.example/v1/events?limit=1 HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`,
      );
      expect(events.body.url).to.equal("/v1/events");
    });
  });

  describe("media types", () => {
    const body = () => JSON.stringify({ phone: uniquePhone() });

    for (const contentType of [
      "text/plain",
      "application/xml",
      "multipart/form-data; boundary=x",
      "application/x-www-form-urlencoded",
      "application/merge-patch+json",
      "text/json",
    ]) {
      it(`refuses a body sent as ${contentType} with 415 unsupported_media_type`, async () => {
        const rawBody = body();
        const response = await svc.request("POST", "/v1/users", { rawBody, headers: { "content-type": contentType } });
        expectError(response, 415, "invalid_request_error", "unsupported_media_type");
        // Nothing was created: the same body as JSON creates the user.
        expect((await svc.request("POST", "/v1/users", { rawBody })).status).to.equal(201);
      });
    }

    it("refuses a body without a Content-Type, and one that is not a media type", async () => {
      const rawBody = body();
      const auth = `Authorization: Bearer ${svc.sandboxKey}\r\n`;
      const bare = await rawHttpExchange(
        svc.baseUrl,
        `POST /v1/users HTTP/1.1\r\nHost: x\r\n${auth}Content-Length: ${rawBody.length}\r\nConnection: close\r\n\r\n${rawBody}`,
      );
      expect(bare.status).to.equal(415);
      expect(bare.body.error).to.include({ code: "unsupported_media_type", type: "invalid_request_error" });
      expect(bare.body.error.request_id).to.equal(bare.headers["x-request-id"]);
      // Not even a media type: refused while the body is read, before the key is looked at (like an oversized body).
      const garbage = await svc.request("POST", "/v1/users", { key: null, rawBody, headers: { "content-type": "garbage" } });
      expectError(garbage, 415, "invalid_request_error", "unsupported_media_type");
      expect(garbage.headers.get("x-ratelimit-limit")).to.be.a("string");
    });

    it("accepts application/json with any parameters and in any case", async () => {
      for (const contentType of [
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON;charset=UTF-8",
        "application/json; charset=latin1",
      ]) {
        const response = await svc.request("POST", "/v1/users", { rawBody: body(), headers: { "content-type": contentType } });
        expect(response.status, `${contentType}: ${response.text}`).to.equal(201);
      }
    });

    it("lets a request without a body send any Content-Type, or none", async () => {
      const endpoint = await svc.request("POST", "/v1/webhook-endpoints", { body: { url: "https://hooks.example.com/media" } });
      expect(endpoint.status, endpoint.text).to.equal(201);
      const auth = `Authorization: Bearer ${svc.sandboxKey}\r\n`;
      const deleted = await rawHttpExchange(
        svc.baseUrl,
        `DELETE /v1/webhook-endpoints/${endpoint.body.id} HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`,
      );
      expect(deleted.status).to.equal(200);
      const plain = await rawHttpExchange(
        svc.baseUrl,
        `DELETE /v1/webhook-endpoints/${endpoint.body.id} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: text/plain\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
      );
      expect(plain.status).to.equal(404);
      expect(plain.body.error.code).to.equal("webhook_endpoint_not_found");
      expect((await svc.request("GET", "/v1/events", { headers: { "content-type": "text/plain" } })).status).to.equal(200);
    });

    it("is checked with the JSON: after route, body size, key and rate limit, before the Idempotency-Key", async () => {
      const headers = { "content-type": "text/plain" };
      expectError(await svc.request("POST", "/v1/nothing", { rawBody: "{}", headers }), 404, "invalid_request_error", "route_not_found");
      expectError(
        await svc.request("POST", "/v1/nothing", { rawBody: "{}", headers: { "content-type": "garbage" } }),
        404,
        "invalid_request_error",
        "route_not_found",
      );
      expectError(
        await svc.request("POST", "/v1/users", { rawBody: "x".repeat(70_000), headers }),
        413,
        "invalid_request_error",
        "payload_too_large",
      );
      expectError(
        await svc.request("POST", "/v1/users", { key: `svc_test_${"0".repeat(30)}`, rawBody: body(), headers }),
        401,
        "authentication_error",
        "invalid_api_key",
      );
      const { secret } = await createKey(svc, svc.projectId, { rateLimit: 1 });
      expect((await svc.request("GET", "/v1/events", { key: secret })).status).to.equal(200);
      expectError(await svc.request("POST", "/v1/users", { key: secret, rawBody: body(), headers }), 429, "rate_limit_error", "rate_limit_exceeded");
      expectError(
        await svc.request("POST", "/v1/users", { rawBody: body(), headers: { ...headers, "idempotency-key": "" } }),
        415,
        "invalid_request_error",
        "unsupported_media_type",
      );
    });
  });

  describe("text that is not text", () => {
    const utf8Body = (bytes: number[]) =>
      Buffer.concat([Buffer.from(`{"phone":"${uniquePhone()}","first_name":"a`), Buffer.from(bytes), Buffer.from(`b"}`)]);

    for (const [label, bytes] of [
      ["a stray continuation byte", [0x80]],
      ["0xFF", [0xff]],
      ["a truncated sequence", [0xe2, 0x82]],
      ["an overlong encoding", [0xc0, 0xaf]],
      ["an encoded surrogate (CESU-8)", [0xed, 0xa0, 0x80]],
    ] as const) {
      it(`answers 400 invalid_json for invalid UTF-8: ${label}`, async () => {
        expectError(await svc.request("POST", "/v1/users", { rawBody: utf8Body([...bytes]) }), 400, "invalid_request_error", "invalid_json");
      });
    }

    it("accepts valid multi-byte UTF-8", async () => {
      const response = await svc.request("POST", "/v1/users", { rawBody: utf8Body([0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80]) });
      expect(response.status, response.text).to.equal(201);
    });

    it("refuses NUL, control characters and lone surrogates with 422 validation_error naming the field", async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ first_name: "a\u0000b" }, "first_name"],
        [{ last_name: "\u001b[31m" }, "last_name"],
        [{ first_name: "tab\there" }, "first_name"],
        [{ first_name: "line\nbreak" }, "first_name"],
        [{ first_name: "del\u007f" }, "first_name"],
        [{ first_name: "\ud800" }, "first_name"],
        [{ last_name: "x\udc00y" }, "last_name"],
        [{ external_id: "id\u0000" }, "external_id"],
        [{ terms_acceptance: { version: "v1\u0001", accepted_at: "2026-01-01T00:00:00Z" } }, "terms_acceptance.version"],
      ];
      for (const [fields, param] of cases) {
        const rawBody = JSON.stringify({ phone: uniquePhone(), ...fields });
        const response = await svc.request("POST", "/v1/users", { rawBody });
        expectError(response, 422, "invalid_request_error", "validation_error", param);
      }
      // JSON's own escapes for a surrogate pair spell one character, which is text.
      const pair = await svc.request("POST", "/v1/users", { rawBody: `{"phone":"${uniquePhone()}","first_name":"\\ud83d\\ude00"}` });
      expect(pair.status, pair.text).to.equal(201);
      expect((await svc.request("GET", `/v1/users/${pair.body.id}`)).body.profile.first_name).to.equal("\u{1F600}");
      const lone = await svc.request("POST", "/v1/users", { rawBody: `{"phone":"${uniquePhone()}","first_name":"\\ud83d"}` });
      expectError(lone, 422, "invalid_request_error", "validation_error", "first_name");
    });

    it("allows tab and line feed in a description, and refuses other controls there", async () => {
      const created = await svc.request("POST", "/v1/webhook-endpoints", {
        body: { url: "https://hooks.example.com/text", description: "line one\n\tline two" },
      });
      expect(created.status, created.text).to.equal(201);
      expect(created.body.description).to.equal("line one\n\tline two");
      for (const description of ["carriage\rreturn", "bell\u0007", "nul\u0000", "\udfff"]) {
        const response = await svc.request("PATCH", `/v1/webhook-endpoints/${created.body.id}`, { body: { description } });
        expectError(response, 422, "invalid_request_error", "validation_error", "description");
      }
      const listed = await svc.request("POST", "/v1/webhook-endpoints", {
        body: { url: "https://hooks.example.com/text2", event_types: ["user.created", "kyc\u0000"] },
      });
      expectError(listed, 422, "invalid_request_error", "validation_error", "event_types[1]");
      await svc.request("DELETE", `/v1/webhook-endpoints/${created.body.id}`);
    });

    it("refuses them in query parameters too", async () => {
      expectError(await svc.request("GET", "/v1/events?type=user.created%00"), 422, "invalid_request_error", "validation_error", "type");
      expectError(await svc.request("GET", "/v1/events?starting_after=%0A"), 422, "invalid_request_error", "validation_error", "starting_after");
    });

    it("refuses them over Connect and gRPC (InvalidArgument, validation_error naming the field)", async () => {
      const connect = await svc.request("POST", "/svc.v1.UsersService/CreateUser", { body: { phone: uniquePhone(), firstName: "a\u0000b" } });
      expect(connect.status, connect.text).to.equal(400);
      expect(connect.body.code).to.equal("invalid_argument");
      expect(connect.body.message).to.contain("first_name");
      const client = new GrpcTestClient(svc.grpcAddress);
      try {
        await client.fails("UsersService", "CreateUser", { phone: uniquePhone(), first_name: "x\u0007" }, bearer(svc.sandboxKey), {
          code: grpc.status.INVALID_ARGUMENT,
          reason: "validation_error",
          param: "first_name",
        });
      } finally {
        client.close();
      }
    });
  });

  describe("birth_date", () => {
    it("refuses years before 1900 with 422 validation_error naming birth_date", async () => {
      for (const birthDate of ["0000-01-01", "1899-12-31"]) {
        const response = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone(), birth_date: birthDate } });
        expectError(response, 422, "invalid_request_error", "validation_error", "birth_date");
      }
      expect((await svc.request("POST", "/v1/users", { body: { phone: uniquePhone(), birth_date: "1900-01-01" } })).status).to.equal(201);
    });
  });
});
