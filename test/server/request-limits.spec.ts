// Limits every transport enforces while reading a request, before it is authenticated: bodies of at most
// 64 KiB, headers and body received within the receive timeout (a server stream's answer may last longer), JSON
// nested at most 64 deep.
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { Worker } from "node:worker_threads";
import * as grpc from "@grpc/grpc-js";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { expect } from "chai";
import { EventsService } from "../../gen/svc/v1/events_pb.ts";
import { GrpcTestClient } from "../support/grpc-client.ts";
import { uniquePhone } from "../support/phones.ts";
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

/**
 * A stock client streaming a large body of unannounced length (chunked) on its own thread, so that it writes while
 * the server answers, as a client in another process does: node:http writing 64 KiB pieces as fast as the socket
 * takes them, or fetch with a ReadableStream body. Resolves with what the client read, or the error it reported.
 */
function streamedPost(url: string, client: "node:http" | "fetch", bytes: number): Promise<{ status?: number; body?: any; error?: string }> {
  const source = `
    const { parentPort, workerData: { url, client, bytes } } = require("node:worker_threads");
    const http = require("node:http");
    const piece = Buffer.alloc(64 * 1024, "x");
    const read = (status, text) => { try { return { status, body: JSON.parse(text) }; } catch { return { status, error: "unreadable: " + text.slice(0, 80) }; } };
    function viaHttp() {
      return new Promise((resolve) => {
        const request = http.request(url, { method: "POST", headers: { "content-type": "application/json" } });
        request.on("response", (response) => {
          const chunks = [];
          response.on("data", (chunk) => chunks.push(chunk));
          response.on("end", () => resolve(read(response.statusCode, Buffer.concat(chunks).toString("utf8"))));
          response.on("error", (error) => resolve({ error: error.code ?? String(error) }));
        });
        request.on("error", (error) => resolve({ error: error.code ?? String(error) }));
        let sent = 0;
        const pump = () => {
          while (sent < bytes) {
            sent += piece.length;
            if (!request.write(piece)) return void request.once("drain", pump);
          }
          request.end();
        };
        pump();
      });
    }
    async function viaFetch() {
      let sent = 0;
      const body = new ReadableStream({
        pull(controller) {
          if (sent >= bytes) return controller.close();
          sent += piece.length;
          controller.enqueue(new Uint8Array(piece));
        },
      });
      try {
        const response = await fetch(url, { method: "POST", body, duplex: "half", headers: { "content-type": "application/json" } });
        return read(response.status, await response.text());
      } catch (error) {
        return { error: error.cause?.code ?? String(error.cause ?? error) };
      }
    }
    (client === "fetch" ? viaFetch() : viaHttp()).then((result) => parentPort.postMessage(result));
  `;
  return new Promise((resolve, reject) => {
    const worker = new Worker(source, { eval: true, workerData: { url, client, bytes } });
    worker.once("message", (result) => {
      resolve(result);
      void worker.terminate();
    });
    worker.once("error", reject);
  });
}

/** A gRPC call that sends 5 bytes of a 100-byte message and never ends its request: closed at the receive timeout. */
async function expectCancelledAtReceiveTimeout(address: string, headers: http2.OutgoingHttpHeaders): Promise<void> {
  const session = http2.connect(`http://${address}`);
  try {
    const stream = session.request({ ":method": "POST", "content-type": "application/grpc", ...headers });
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

    it("a streamed 5 MiB body is answered and the client reads the answer (REST 413, Connect resource_exhausted), not a reset", async () => {
      for (const client of ["node:http", "fetch"] as const) {
        for (let attempt = 0; attempt < 3; attempt++) {
          const rest = await streamedPost(`${svc.baseUrl}/v1/webhook-endpoints`, client, 5 * 1024 * 1024);
          expect(rest.error, `${client} REST`).to.equal(undefined);
          expect(rest.status, `${client} REST`).to.equal(413);
          expect(rest.body.error.code).to.equal("payload_too_large");
          expect(rest.body.error.request_id).to.match(/^req_/);
          payloadTooLarge(
            (await streamedPost(`${svc.baseUrl}/svc.v1.WebhookEndpointsService/CreateWebhookEndpoint`, client, 5 * 1024 * 1024)) as {
              status: number;
              body: any;
            },
          );
        }
      }
    });

    it("after the answer, the rest of a body is read only up to 8 MiB: a longer one is cut", async () => {
      const { port } = new URL(svc.baseUrl);
      // Half-open allowed: the client goes on sending after the server's FIN, as an HTTP client writing its body does.
      const socket = net.connect({ port: Number(port), host: "127.0.0.1", allowHalfOpen: true });
      socket.on("error", () => {});
      const received: Buffer[] = [];
      socket.on("data", (chunk: Buffer) => received.push(chunk));
      const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
      socket.write("POST /v1/webhook-endpoints HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
      const piece = Buffer.concat([Buffer.from("10000\r\n"), Buffer.alloc(0x10000, "x"), Buffer.from("\r\n")]);
      // 64 MiB offered; the server stops reading after about 8 MiB past the limit and closes.
      let offered = 0;
      let closedEarly = false;
      void closed.then(() => (closedEarly = true));
      while (offered < 64 * 1024 * 1024 && !closedEarly) {
        offered += 0x10000;
        if (!socket.write(piece)) await Promise.race([new Promise((resolve) => socket.once("drain", resolve)), closed]);
      }
      await closed;
      expect(closedEarly, "closed before the whole body was sent").to.equal(true);
      expect(socket.bytesWritten).to.be.below(32 * 1024 * 1024);
      expect(Buffer.concat(received).toString("latin1")).to.match(/^HTTP\/1\.1 413 /);
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

    it("HTTP/1.1: a refused body that goes on trickling is still cut at the receive timeout, after its answer", async () => {
      const { port } = new URL(svc.baseUrl);
      for (const path of ["/v1/webhook-endpoints", "/svc.v1.WebhookEndpointsService/CreateWebhookEndpoint"]) {
        // Half-open allowed: the server's FIN after its answer does not end the client's side.
        const socket = net.connect({ port: Number(port), host: "127.0.0.1", allowHalfOpen: true });
        socket.on("error", () => {});
        const started = Date.now();
        socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
        // Past the limit, then a byte every 100 ms of a chunk that never ends.
        socket.write(Buffer.concat([Buffer.from("20000\r\n"), Buffer.alloc(0x20000, "x"), Buffer.from("\r\nffff\r\n")]));
        const trickle = setInterval(() => socket.writable && socket.write("x"), 100);
        const received: Buffer[] = [];
        let answeredAfter: number | undefined;
        socket.on("data", (chunk: Buffer) => {
          answeredAfter ??= Date.now() - started;
          received.push(chunk);
        });
        // Once the server has let the connection go, the next byte is answered with a reset.
        await new Promise<void>((resolve) => socket.once("close", () => resolve()));
        clearInterval(trickle);
        const elapsed = Date.now() - started;
        expect(answeredAfter, path).to.be.below(RECEIVE_TIMEOUT_MS / 2);
        expect(Buffer.concat(received).toString("latin1"), path).to.match(/^HTTP\/1\.1 (413|429) /);
        expect(elapsed, path).to.be.at.least(RECEIVE_TIMEOUT_MS - 100);
        expect(elapsed, path).to.be.below(RECEIVE_TIMEOUT_MS + 3000);
      }
    });

    it("HTTP/2 (gRPC): the stream is cancelled once the receive timeout passes", async () => {
      await expectCancelledAtReceiveTimeout(svc.grpcAddress, { ":path": "/svc.v1.UsersService/CreateUser" });
    });
  });

  describe("server streams outlive the receive timeout once their request has arrived", () => {
    it("StreamEvents over gRPC, Connect and gRPC-Web stays open past the timeout and carries an event logged after it", async () => {
      const options = {
        interceptors: [
          ((next) => (request) => {
            request.header.set("authorization", `Bearer ${svc.sandboxKey}`);
            return next(request);
          }) satisfies Interceptor,
        ],
      };
      const transports = {
        grpc: createGrpcTransport({ baseUrl: `http://${svc.grpcAddress}`, ...options }),
        connect: createConnectTransport({ baseUrl: svc.baseUrl, httpVersion: "1.1", ...options }),
        "grpc-web": createGrpcWebTransport({ baseUrl: svc.baseUrl, httpVersion: "1.1", ...options }),
      };
      const abort = new AbortController();
      const streams = Object.entries(transports).map(([protocol, transport]) => ({
        protocol,
        messages: createClient(EventsService, transport).streamEvents({}, { signal: abort.signal })[Symbol.asyncIterator](),
      }));
      try {
        for (const { protocol, messages } of streams) expect((await messages.next()).value?.caughtUp, `${protocol}: caught up`).to.equal(true);
        await new Promise((resolve) => setTimeout(resolve, RECEIVE_TIMEOUT_MS * 2.5));
        const user = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
        expect(user.status).to.equal(201);
        for (const { protocol, messages } of streams) {
          const next = await messages.next();
          expect(next.done, `${protocol}: the stream is still open`).to.equal(false);
          expect(next.value?.event?.type, protocol).to.equal("user.created");
          expect((next.value?.event?.data?.object as { id?: string } | undefined)?.id, protocol).to.equal(user.body.id);
        }
      } finally {
        abort.abort();
        await Promise.all(streams.map(({ messages }) => messages.return?.()));
      }
    });

    it("HTTP/2 (gRPC): a StreamEvents call whose request never ends is still cancelled at the timeout", async () => {
      await expectCancelledAtReceiveTimeout(svc.grpcAddress, {
        ":path": "/svc.v1.EventsService/StreamEvents",
        authorization: `Bearer ${svc.sandboxKey}`,
      });
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
