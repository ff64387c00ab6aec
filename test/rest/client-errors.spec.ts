// Requests Node cannot parse as HTTP are still answered in the envelope, with the five headers.
import net from "node:net";
import { expect } from "chai";
import { startTestService, type TestService } from "../support/test-service.ts";

async function rawExchange(baseUrl: string, request: string): Promise<{ status: number; headers: Record<string, string>; body: any }> {
  const { hostname, port } = new URL(baseUrl);
  const socket = net.connect(Number(port), hostname);
  socket.write(request);
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  const [head, body] = text.split("\r\n\r\n");
  const [statusLine, ...lines] = head!.split("\r\n");
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
  return { status: Number(statusLine!.split(" ")[1]), headers, body: JSON.parse(body!) };
}

describe("requests that are not readable HTTP", () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  function expectEnveloped(answer: Awaited<ReturnType<typeof rawExchange>>, status: number, code: string): void {
    expect(answer.status).to.equal(status);
    expect(answer.body.error.code).to.equal(code);
    expect(answer.body.error.type).to.equal("invalid_request_error");
    expect(answer.body.error.request_id).to.equal(answer.headers["x-request-id"]);
    for (const name of ["x-request-id", "x-api-version", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) {
      expect(answer.headers[name], name).to.be.a("string");
    }
  }

  it("answers headers larger than Node accepts with 431 request_header_fields_too_large", async () => {
    const answer = await rawExchange(svc.baseUrl, `GET /v1/events HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`);
    expectEnveloped(answer, 431, "request_header_fields_too_large");
    expect(answer.body.error.message).to.match(/headers/);
  });

  it("answers a malformed request line with 400 invalid_json", async () => {
    const answer = await rawExchange(svc.baseUrl, "NOT HTTP AT ALL\r\n\r\n");
    expectEnveloped(answer, 400, "invalid_json");
  });
});
