// A body of zero bytes (docs/contract.md, Check order, step 6): no body is not `{}` where the route requires a
// body (the creations: 400 invalid_json), and is the same as `{}` where the body is optional.
import { expect } from "chai";
import { expectError } from "../support/errors.ts";
import { uniquePhone } from "../support/phones.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

describe("REST bodies of zero bytes", () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  for (const path of ["/v1/users", "/v1/webhook-endpoints"]) {
    it(`POST ${path} (body required): 400 invalid_json, with or without a Content-Type`, async () => {
      const withType = await svc.request("POST", path, { rawBody: "" });
      expectError(withType, 400, "invalid_request_error", "invalid_json");
      expect(withType.body.error.message).to.equal("The request body is empty; this route takes a JSON object.");
      expectError(await svc.request("POST", path), 400, "invalid_request_error", "invalid_json");
      expectError(await svc.request("POST", path, { rawBody: " \r\n" }), 400, "invalid_request_error", "invalid_json");
    });
  }

  it("`{}` on a route whose body is required reaches validation (422 naming the field)", async () => {
    expectError(await svc.request("POST", "/v1/users", { body: {} }), 422, "invalid_request_error", "validation_error", "phone");
  });

  it("an optional body (PATCH, rotation) of zero bytes is the same as {}", async () => {
    const user = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone(), first_name: "Zed" } });
    const patched = await svc.request("PATCH", `/v1/users/${user.body.id}`, { rawBody: "" });
    expect(patched.status, patched.text).to.equal(200);
    expect(patched.body.profile.first_name).to.equal("Zed");
    const endpoint = await svc.request("POST", "/v1/webhook-endpoints", { body: { url: "https://example.com/zero-bytes" } });
    expect(endpoint.status, endpoint.text).to.equal(201);
    const rotated = await svc.request("POST", `/v1/webhook-endpoints/${endpoint.body.id}/rotate-secret`);
    expect(rotated.status, rotated.text).to.equal(200);
  });
});
