import { expect } from "chai";
import { expectError } from "../support/errors.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

describe("service smoke", () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  it("creates a sandbox user and reads it back with its profile", async () => {
    const created = await svc.request("POST", "/v1/users", { body: { phone: "+14155550100", email: "Ann@Example.com" } });
    expect(created.status).to.equal(201);
    expect(created.body).not.to.have.property("profile");
    const read = await svc.request("GET", `/v1/users/${created.body.id}`);
    expect(read.status).to.equal(200);
    expect(read.body.profile.email).to.equal("ann@example.com");
  });

  it("answers an unknown route with route_not_found and the five headers", async () => {
    const response = await svc.request("GET", "/v1/nothing-here");
    expectError(response, 404, "invalid_request_error", "route_not_found");
    for (const name of ["x-request-id", "x-api-version", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) {
      expect(response.headers.get(name), name).to.be.a("string");
    }
  });
});
