// Edges of REST requests: path parameters of any length, text that is not text (invalid UTF-8, lone surrogates,
// control characters), media types, absolute-form request targets, the birth_date floor.
import net from "node:net";
import { expect } from "chai";
import { expectError } from "../support/errors.ts";
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
});
