// Requests refused before a key was accepted count against a quota of the client address of their own
// (`unauth:<ip>`), not against the one of the keyless OpenAPI document (`addr:<ip>`): failed keys cannot use up
// the document's quota, nor the document theirs. Each answer's rate-limit headers describe the quota it used.
import { expect } from "chai";
import { expectError } from "../support/errors.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

const BAD_KEY = `svc_test_${"0".repeat(30)}`;

describe("the quota of requests refused before authentication", () => {
  let svc: TestService;
  beforeEach(async () => {
    svc = await startTestService({ env: { SVC_RATE_LIMIT: "3" } });
  });
  afterEach(async () => {
    await svc.stop();
  });

  it("failed keys exhaust their own quota, not the OpenAPI document's", async () => {
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const refused = await svc.request("GET", "/v1/events", { key: BAD_KEY });
      expectError(refused, 401, "authentication_error", "invalid_api_key");
      expect(refused.headers.get("x-ratelimit-limit")).to.equal("3");
      remaining.push(refused.headers.get("x-ratelimit-remaining")!);
    }
    expect(remaining).to.deep.equal(["2", "1", "0"]);
    // Authentication comes before the rate limit: a refusal keeps its own code, its headers show the spent quota.
    const missing = await svc.request("GET", "/v1/events", { key: null });
    expectError(missing, 401, "authentication_error", "missing_api_key");
    expect(missing.headers.get("x-ratelimit-remaining")).to.equal("0");
    expectError(await svc.request("GET", "/v1/nothing", { key: null }), 404, "invalid_request_error", "route_not_found");

    const document = await svc.request("GET", "/v1/openapi.json", { key: null });
    expect(document.status).to.equal(200);
    expect(document.headers.get("x-ratelimit-limit")).to.equal("3");
    expect(document.headers.get("x-ratelimit-remaining")).to.equal("2");
  });

  it("the OpenAPI document exhausts its own quota, not the one of refused keys", async () => {
    for (let i = 0; i < 3; i++) expect((await svc.request("GET", "/v1/openapi.json", { key: null })).status).to.equal(200);
    expectError(await svc.request("GET", "/v1/openapi.json", { key: null }), 429, "rate_limit_error", "rate_limit_exceeded");

    const refused = await svc.request("GET", "/v1/events", { key: BAD_KEY });
    expectError(refused, 401, "authentication_error", "invalid_api_key");
    expect(refused.headers.get("x-ratelimit-remaining")).to.equal("2");
    // A valid key keeps its own quota throughout.
    expect((await svc.request("GET", "/v1/events")).status).to.equal(200);
  });
});
