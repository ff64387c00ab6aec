// Edges of REST requests: path parameters of any length, text that is not text (invalid UTF-8, lone surrogates,
// control characters), media types, absolute-form request targets, the birth_date floor.
import net from "node:net";
import { expect } from "chai";
import { expectError } from "../support/errors.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

/** Sends raw bytes as one HTTP/1.1 request (Connection: close) and parses the answer. */
export async function rawRequest(baseUrl: string, request: string | Buffer): Promise<{ status: number; headers: Record<string, string>; body: any }> {
  const { hostname, port } = new URL(baseUrl);
  const socket = net.connect(Number(port), hostname);
  socket.write(request);
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  const split = text.indexOf("\r\n\r\n");
  const [statusLine, ...lines] = text.slice(0, split).split("\r\n");
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
  const raw = text.slice(split + 4);
  return { status: Number(statusLine!.split(" ")[1]), headers, body: raw ? JSON.parse(raw) : undefined };
}

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
        const answer = await rawRequest(svc.baseUrl, `GET ${target} HTTP/1.1\r\nHost: evil.example\r\n${auth}Connection: close\r\n\r\n`);
        expect(answer.status, target).to.equal(200);
        expect(answer.body.url).to.equal(`/v1/users/${user.body.id}/wallets`);
      }
      const events = await rawRequest(svc.baseUrl, `GET http://evil.example/v1/events?limit=1 HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`);
      expect(events.body.url).to.equal("/v1/events");
    });
  });
});
