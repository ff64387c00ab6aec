// Limits every transport enforces while reading a request, before it is authenticated: bodies of at most
// 64 KiB, headers and body received within the receive timeout, JSON nested at most 64 deep.
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import * as grpc from "@grpc/grpc-js";
import { expect } from "chai";
import { GrpcTestClient } from "../support/grpc-client.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

const RECEIVE_TIMEOUT_MS = 1000;
const OVER_LIMIT = 64 * 1024 + 1;

/** A Connect JSON call answered as raw HTTP, so the refusal can be read whatever it is. */
function connectCall(baseUrl: string, body: Buffer, options: { chunked?: boolean } = {}): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${baseUrl}/svc.v1.WebhookEndpointsService/CreateWebhookEndpoint`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(options.chunked ? {} : { "content-length": String(body.length) }) },
    });
    request.on("response", (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) }));
    });
    // The server may answer and close before the whole body is sent: that is the point.
    request.on("error", (error: NodeJS.ErrnoException) => (error.code === "EPIPE" || error.code === "ECONNRESET" ? undefined : reject(error)));
    if (options.chunked) {
      // Sent in pieces with no length announced: the server must stop at the limit, not at the end.
      for (let offset = 0; offset < body.length; offset += 16 * 1024) request.write(body.subarray(offset, offset + 16 * 1024));
      request.end();
    } else request.end(body);
  });
}

function payloadTooLarge(answer: { status: number; body: any }): void {
  // Connect's protocol answers resource_exhausted with HTTP 429; the service's code rides in ErrorInfo.
  expect(answer.status).to.equal(429);
  expect(answer.body.code).to.equal("resource_exhausted");
  const info = Buffer.from(answer.body.details[0].value, "base64").toString("latin1");
  expect(info).to.contain("payload_too_large");
}

function oversizedEndpoint(): Buffer {
  return Buffer.from(JSON.stringify({ url: "https://hooks.example.com/x", description: "x".repeat(OVER_LIMIT) }));
}

describe("request limits on every transport", () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService({ timings: { requestReceiveTimeoutMs: RECEIVE_TIMEOUT_MS } });
  });
  after(async () => {
    await svc.stop();
  });

  describe("64 KiB bodies, refused while reading and before the key is checked", () => {
    it("Connect: a declared Content-Length over the limit, without any key, is payload_too_large (not 401)", async () => {
      payloadTooLarge(await connectCall(svc.baseUrl, oversizedEndpoint()));
    });

    it("Connect: a chunked body of 1 MiB is refused at the limit", async () => {
      const body = Buffer.concat([
        Buffer.from('{"url":"https://hooks.example.com/x","description":"'),
        Buffer.alloc(1024 * 1024, "x"),
        Buffer.from('"}'),
      ]);
      payloadTooLarge(await connectCall(svc.baseUrl, body, { chunked: true }));
    });

    it("Connect: a body at the limit is read and answered by the method (here 401, no key)", async () => {
      const filler = "x".repeat(64 * 1024 - 100);
      const body = Buffer.from(JSON.stringify({ url: "https://hooks.example.com/x", description: filler }));
      expect(body.length).to.be.at.most(64 * 1024);
      const answer = await connectCall(svc.baseUrl, body);
      expect(answer.status).to.equal(401);
      expect(answer.body.code).to.equal("unauthenticated");
    });

    it("gRPC: a message over the limit, without any key, is RESOURCE_EXHAUSTED payload_too_large", async () => {
      const client = new GrpcTestClient(svc.grpcAddress);
      try {
        await client.fails(
          "UsersService",
          "CreateUser",
          { phone: "+1".padEnd(OVER_LIMIT, "5") },
          {},
          {
            code: grpc.status.RESOURCE_EXHAUSTED,
            reason: "payload_too_large",
          },
        );
      } finally {
        client.close();
      }
    });

    it("REST: 413 payload_too_large before the key is checked", async () => {
      const response = await svc.request("POST", "/v1/webhook-endpoints", { rawBody: oversizedEndpoint(), key: null });
      expect(response.status).to.equal(413);
      expect(response.body.error.code).to.equal("payload_too_large");
    });
  });

  describe("bodies sent too slowly", () => {
    it("HTTP/1.1 (REST and Connect): the connection is answered and closed once the receive timeout passes", async () => {
      const { port } = new URL(svc.baseUrl);
      for (const path of ["/v1/users", "/svc.v1.UsersService/CreateUser"]) {
        const socket = net.connect(Number(port), "127.0.0.1");
        socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`);
        const started = Date.now();
        const received: Buffer[] = [];
        socket.on("data", (chunk: Buffer) => received.push(chunk));
        await new Promise<void>((resolve) => socket.once("close", () => resolve()));
        const elapsed = Date.now() - started;
        expect(elapsed, path).to.be.at.least(RECEIVE_TIMEOUT_MS - 100);
        expect(elapsed, path).to.be.below(RECEIVE_TIMEOUT_MS + 3000);
      }
    });

    it("HTTP/2 (gRPC): the stream is cancelled once the receive timeout passes", async () => {
      const session = http2.connect(`http://${svc.grpcAddress}`);
      try {
        const stream = session.request({ ":method": "POST", ":path": "/svc.v1.UsersService/CreateUser", "content-type": "application/grpc" });
        stream.write(Buffer.from([0, 0, 0, 0, 100]));
        const started = Date.now();
        stream.resume();
        await new Promise<void>((resolve) => stream.once("close", () => resolve()));
        const elapsed = Date.now() - started;
        expect(elapsed).to.be.at.least(RECEIVE_TIMEOUT_MS - 100);
        expect(elapsed).to.be.below(RECEIVE_TIMEOUT_MS + 3000);
      } finally {
        session.destroy();
      }
    });
  });

  describe("deeply nested JSON", () => {
    const nested = (depth: number) => `{"url":"https://hooks.example.com/n","description":${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}}`;

    it("refuses a body nested 5,000 deep with 400 invalid_json, with and without an Idempotency-Key", async () => {
      for (const headers of [{}, { "idempotency-key": "deep-1" }] as Record<string, string>[]) {
        const response = await svc.request("POST", "/v1/webhook-endpoints", { rawBody: nested(5000), headers });
        expect(response.status).to.equal(400);
        expect(response.body.error.code).to.equal("invalid_json");
      }
    });

    it("reads 64 levels (the body is level 1) and refuses 65", async () => {
      const at = await svc.request("POST", "/v1/webhook-endpoints", { rawBody: nested(64), headers: { "idempotency-key": "deep-64" } });
      expect(at.status).to.equal(422);
      expect(at.body.error.param).to.equal("description");
      const over = await svc.request("POST", "/v1/webhook-endpoints", { rawBody: nested(65), headers: { "idempotency-key": "deep-65" } });
      expect(over.status).to.equal(400);
      expect(over.body.error.code).to.equal("invalid_json");
    });
  });
});
