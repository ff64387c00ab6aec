// Requests Node cannot parse as HTTP are still answered in the envelope, with the five headers.
import { expect } from "chai";
import { rawHttpExchange } from "../support/raw-http.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

describe("requests that are not readable HTTP", () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  function expectEnveloped(answer: Awaited<ReturnType<typeof rawHttpExchange>>, status: number, code: string): void {
    expect(answer.status).to.equal(status);
    expect(answer.body.error.code).to.equal(code);
    expect(answer.body.error.type).to.equal("invalid_request_error");
    expect(answer.body.error.request_id).to.equal(answer.headers["x-request-id"]);
    for (const name of ["x-request-id", "x-api-version", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) {
      expect(answer.headers[name], name).to.be.a("string");
    }
  }

  it("answers headers larger than Node accepts with 431 request_header_fields_too_large", async () => {
    const answer = await rawHttpExchange(svc.baseUrl, `GET /v1/events HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`);
    expectEnveloped(answer, 431, "request_header_fields_too_large");
    expect(answer.body.error.message).to.match(/headers/);
  });

  it("answers a malformed request line with 400 invalid_json", async () => {
    const answer = await rawHttpExchange(svc.baseUrl, "NOT HTTP AT ALL\r\n\r\n");
    expectEnveloped(answer, 400, "invalid_json");
  });
});
