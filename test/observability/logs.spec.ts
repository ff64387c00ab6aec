// Logs are JSON with the request id on every line of a request, and carry no secret or personal data.
import { Writable } from "node:stream";
import { expect } from "chai";
import { createLogger } from "../../src/observability/logger.ts";
import { scrubText } from "../../src/observability/scrub.ts";
import { capturedLogLines } from "../support/log-capture.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

function memoryLogger() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _e, done) {
      lines.push(...chunk.toString().split("\n").filter(Boolean));
      done();
    },
  });
  return { logger: createLogger({ level: "info", destination }), lines };
}

describe("logs", () => {
  it("scrubs keys, webhook secrets, bearer tokens, phones, emails and dates from free text", () => {
    const text =
      'E11000 duplicate key { phone: "+14155550100" } by svc_test_abcdefghijklmnopqrstuvwx with whsec_ABCDEFGHIJ0123456789abcdefghij01, Bearer adm_xyz, ada@example.com born 1990-01-31 at 2026-11-22T10:00:00Z';
    const scrubbed = scrubText(text);
    for (const secret of [
      "+14155550100",
      "svc_test_abcdefghijklmnopqrstuvwx",
      "whsec_ABCDEFGHIJ0123456789abcdefghij01",
      "adm_xyz",
      "ada@example.com",
      "1990-01-31",
    ]) {
      expect(scrubbed).not.to.contain(secret);
    }
    expect(scrubbed).to.contain("2026-11-22T10:00:00Z");
  });

  it("redacts sensitive fields by name at any depth and scrubs error messages", () => {
    const { logger, lines } = memoryLogger();
    logger.info(
      { user: { phone: "+14155550100", first_name: "Ada", birth_date: "1990-01-31" }, headers: { authorization: "Bearer svc_live_x" } },
      "created",
    );
    logger.error({ err: new Error("duplicate phone +14155550100 for ada@example.com") }, "failed");
    const text = lines.join("\n");
    for (const secret of ["+14155550100", "Ada", "1990-01-31", "svc_live_x", "ada@example.com"]) expect(text).not.to.contain(secret);
    expect(JSON.parse(lines[0]!)).to.include({ level: "info", msg: "created" });
  });

  describe("of a running service", () => {
    let svc: TestService;
    before(async () => {
      svc = await startTestService();
    });
    after(async () => {
      await svc.stop();
    });

    it("writes request lines carrying the request id of the response", async () => {
      const response = await svc.request("POST", "/v1/users", { body: { phone: "+14155550123", first_name: "Logged" } });
      const requestId = response.headers.get("x-request-id")!;
      const lines = capturedLogLines.filter((line) => line.includes(requestId)).map((line) => JSON.parse(line));
      expect(lines.every((line) => line.request_id === requestId)).to.equal(true);
      const completed = lines.find((line) => line.msg === "request completed");
      expect(completed).to.include({ method: "POST", url: "/v1/users", route: "/v1/users", status: 201, level: "info" });
      expect(completed.duration_ms).to.be.a("number");
      const all = capturedLogLines.join("\n");
      expect(all).not.to.contain("+14155550123");
      expect(all).not.to.contain(svc.sandboxKey);
    });
  });
});
