// Free-text scrubbing keeps what is not personal data: the route of a URL stays readable in the logs.
import { expect } from "chai";
import { scrubText } from "../../src/observability/scrub.ts";
import { capturedLogLines } from "../support/log-capture.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

describe("scrubText on URLs", () => {
  it("replaces only the email of a path or query, keeping the route and the other parameters", () => {
    expect(scrubText("/v1/users/ada@example.com/wallets")).to.equal("/v1/users/[redacted-email]/wallets");
    expect(scrubText("/v1/users?email=ada@example.com&limit=5")).to.equal("/v1/users?email=[redacted-email]&limit=5");
    expect(scrubText("/v1/users?email=ada%40example.com&limit=5")).to.equal("/v1/users?email=[redacted-email]&limit=5");
    expect(scrubText("https://hooks.example.com/in?to=ada.b+x@example.co.uk#f")).to.equal("https://hooks.example.com/in?to=[redacted-email]#f");
    expect(scrubText("/v1/users/%2B14155550100")).to.equal("/v1/users/%2B[redacted]");
    expect(scrubText("/v1/users/+14155550100?x=1")).to.equal("/v1/users/+[redacted]?x=1");
  });

  it("scrubs each kind of secret and personal data, whatever its case, and answers other text as it is", () => {
    const samples: [string, string][] = [
      ["key svc_live_abc123", "key svc_live_[redacted]"],
      ["whsec_AbC9 rotated", "whsec_[redacted] rotated"],
      ["token adm_x-Y_z", "token adm_[redacted]"],
      ["BEARER abc.def", "Bearer [redacted]"],
      ["call +14155550100 now", "call +[redacted] now"],
      ["/v1/users?phone=%2b14155550100", "/v1/users?phone=%2B[redacted]"],
      ["born 1990-01-31", "born [redacted-date]"],
      ["ada%40example.com", "[redacted-email]"],
    ];
    for (const [text, scrubbed] of samples) expect(scrubText(text), text).to.equal(scrubbed);
    const plain = "/v1/users/12345/withdrawals?limit=10 at 2026-11-23T10:00:00Z from 127.0.0.1";
    expect(scrubText(plain)).to.equal(plain);
  });

  it("still scrubs emails in free text", () => {
    expect(scrubText('duplicate email "ada@example.com", id 7')).to.equal('duplicate email "[redacted-email]", id 7');
    expect(scrubText("to ada@example.com.")).not.to.contain("ada@");
  });

  describe("in the request lines of a running service", () => {
    let svc: TestService;
    before(async () => {
      svc = await startTestService();
    });
    after(async () => {
      await svc.stop();
    });

    it("logs the route of a URL that carries an email", async () => {
      const response = await svc.request("GET", "/v1/users/ada@example.com/wallets");
      const requestId = response.headers.get("x-request-id")!;
      const completed = capturedLogLines
        .map((line) => JSON.parse(line))
        .find((line) => line.request_id === requestId && line.msg === "request completed");
      expect(completed.url).to.equal("/v1/users/[redacted-email]/wallets");
      expect(capturedLogLines.join("\n")).not.to.contain("ada@example.com");
    });
  });
});
