import { expect } from "chai";
import { readFileSync } from "node:fs";
import { createSecureContext } from "node:tls";
import type { LookupAll } from "../../src/webhooks/address-vetting.ts";
import { networkErrorCode, postWebhook, type WebhookRequest } from "../../src/webhooks/delivery-client.ts";
import { WebhookReceiver } from "./support/receiver.ts";

const fixtures = new URL("../fixtures/webhooks/", import.meta.url);
const BODY = '{"id":"0d1f","object":"event","type":"webhook.test","data":{"message":"héllo ✓"}}';
const SVC_HEADERS = {
  "Svc-Signature": `t=1750000000,v1=${"ab".repeat(32)}`,
  "Svc-Event-Id": "0d1f",
  "Svc-Event-Type": "webhook.test",
  "Svc-Delivery-Attempt": "1",
};

function lookupReturning(address: string): LookupAll & { calls: string[] } {
  const calls: string[] = [];
  const lookup = async (hostname: string) => {
    calls.push(hostname);
    return [{ address, family: address.includes(":") ? 6 : 4 }];
  };
  return Object.assign(lookup, { calls });
}

describe("postWebhook", () => {
  let receiver: WebhookReceiver;
  let port = 0;
  let base = "";

  const post = (overrides: Partial<WebhookRequest> = {}) =>
    postWebhook({
      url: `${base}/hooks?x=1`,
      body: BODY,
      headers: SVC_HEADERS,
      timeoutMs: 2000,
      livemode: false,
      ...overrides,
    });

  before(async () => {
    receiver = await WebhookReceiver.start();
    port = receiver.port;
    base = `http://127.0.0.1:${port}`;
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.handler = (_req, res) => res.end();
  });
  after(() => receiver.close());

  it("POSTs the exact body and headers once and reports a 2xx as success", async () => {
    receiver.handler = (_req, res) => res.writeHead(200).end("thanks");
    const result = await post({ headers: { ...SVC_HEADERS, "content-type": "text/plain", "Content-Length": "1" } });
    expect(result.responseStatus).to.equal(200);
    expect(result.error).to.equal(null);
    expect(Number.isInteger(result.durationMs) && result.durationMs >= 0).to.equal(true);

    expect(receiver.received).to.have.length(1);
    const [request] = receiver.received;
    expect(request!.method).to.equal("POST");
    expect(request!.path).to.equal("/hooks?x=1");
    expect(request!.rawBody).to.equal(BODY);
    expect(request!.headers).to.deep.include({
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(BODY)),
      host: `127.0.0.1:${port}`,
      "user-agent": "Svc-Webhooks/1.0",
      "svc-signature": SVC_HEADERS["Svc-Signature"],
      "svc-event-id": "0d1f",
      "svc-event-type": "webhook.test",
      "svc-delivery-attempt": "1",
    });
  });

  it("treats every 2xx as success, whatever the body", async () => {
    for (const status of [201, 202, 204, 299]) {
      receiver.handler = (_req, res) => res.writeHead(status).end();
      expect(await post()).to.deep.include({ responseStatus: status, error: null });
    }
  });

  it("keeps a caller's User-Agent", async () => {
    await post({ headers: { ...SVC_HEADERS, "User-Agent": "Svc-Webhooks/1.0 (test)" } });
    expect(receiver.received[0]!.headers["user-agent"]).to.equal("Svc-Webhooks/1.0 (test)");
  });

  it("reports a 500 as http_500", async () => {
    receiver.handler = (_req, res) => res.writeHead(500).end("boom");
    expect(await post()).to.deep.include({ responseStatus: 500, error: "http_500" });
  });

  it("reports a 404 as http_404", async () => {
    receiver.handler = (_req, res) => res.writeHead(404).end();
    expect(await post()).to.deep.include({ responseStatus: 404, error: "http_404" });
  });

  it("does not follow a 302 to a private address: http_302", async () => {
    receiver.handler = (req, res) => {
      if (req.url === "/hooks?x=1") res.writeHead(302, { Location: `http://127.0.0.1:${port}/followed` }).end();
      else res.writeHead(200).end();
    };
    expect(await post()).to.deep.include({ responseStatus: 302, error: "http_302" });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(receiver.received.map((r) => r.path)).to.deep.equal(["/hooks?x=1"]);
  });

  it("gives timeout when the receiver does not answer within the limit", async () => {
    receiver.handler = (_req, res) => {
      setTimeout(() => res.writeHead(200).end(), 1500).unref();
    };
    const result = await post({ timeoutMs: 200 });
    expect(result).to.deep.include({ responseStatus: null, error: "timeout" });
    expect(result.durationMs).to.be.within(190, 1000);
  });

  it("gives timeout when the body does not finish within the limit (the limit runs to the last byte)", async () => {
    receiver.handler = (_req, res) => {
      res.writeHead(200, { "Content-Length": "100" });
      res.write("partial");
    };
    const result = await post({ timeoutMs: 200 });
    expect(result).to.deep.include({ responseStatus: 200, error: "timeout" });
  });

  it("gives timeout when DNS resolution outlasts the limit", async () => {
    const neverResolves: LookupAll = () => new Promise(() => {});
    const result = await post({ url: "https://slow-dns.example.com/", livemode: true, lookup: neverResolves, timeoutMs: 100 });
    expect(result).to.deep.include({ responseStatus: null, error: "timeout" });
    expect(result.durationMs).to.be.within(95, 1000);
  });

  it("reads at most a small part of a large answer and still succeeds", async () => {
    receiver.handler = (_req, res) => {
      res.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 120);
      const writeMore = (): void => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once("drain", writeMore);
      };
      writeMore();
    };
    expect(await post({ timeoutMs: 1000 })).to.deep.include({ responseStatus: 200, error: null });
  });

  it("gives connection_refused for a closed port", async () => {
    const closed = await WebhookReceiver.start();
    const closedPort = closed.port;
    await closed.close();
    expect(await post({ url: `http://127.0.0.1:${closedPort}/` })).to.deep.include({
      responseStatus: null,
      error: "connection_refused",
    });
  });

  it("gives connection_reset when the receiver destroys the socket", async () => {
    receiver.handler = (req) => req.socket.destroy();
    expect(await post()).to.deep.include({ responseStatus: null, error: "connection_reset" });
  });

  it("gives connection_reset when the socket dies in the middle of the body", async () => {
    receiver.handler = (req, res) => {
      res.writeHead(200, { "Content-Length": "100" });
      res.write("partial", () => req.socket.destroy());
    };
    expect(await post()).to.deep.include({ responseStatus: 200, error: "connection_reset" });
  });

  it("gives dns_error for a name that does not resolve", async () => {
    expect(await post({ url: "https://no-such-host.invalid/", livemode: true })).to.deep.include({
      responseStatus: null,
      error: "dns_error",
    });
  });

  it("blocks a name resolving to 127.0.0.1 in live mode before connecting (ssrf_blocked)", async () => {
    const lookup = lookupReturning("127.0.0.1");
    const result = await post({ url: `https://rebound.example.com:${port}/`, livemode: true, lookup });
    expect(result).to.deep.include({ responseStatus: null, error: "ssrf_blocked" });
    expect(lookup.calls).to.deep.equal(["rebound.example.com"]);
    expect(receiver.received).to.have.length(0);
  });

  it("re-checks the URL rules at every attempt (ssrf_blocked)", async () => {
    expect(await post({ livemode: true })).to.deep.include({ responseStatus: null, error: "ssrf_blocked" });
    expect(await post({ url: `https://hooks.example.com:6379/`, lookup: lookupReturning("93.184.216.34") })).to.deep.include({
      responseStatus: null,
      error: "ssrf_blocked",
    });
    expect(receiver.received).to.have.length(0);
  });

  it("resolves once and connects only to the vetted address, sending the host name as Host", async function () {
    // The vetted address (127.0.0.2) differs from what the system resolver says for localhost (127.0.0.1),
    // where nothing listens on this port: the request arrives only if the connection used the pinned address.
    let pinnedReceiver: WebhookReceiver;
    try {
      pinnedReceiver = await WebhookReceiver.start(undefined, "127.0.0.2");
    } catch {
      this.skip();
    }
    const pinnedPort = pinnedReceiver.port;
    try {
      const lookup = lookupReturning("127.0.0.2");
      const result = await post({ url: `http://localhost:${pinnedPort}/pinned`, lookup });
      expect(result).to.deep.include({ responseStatus: 200, error: null });
      expect(lookup.calls).to.deep.equal(["localhost"]);
      expect(pinnedReceiver.received.map((r) => [r.path, r.headers.host])).to.deep.equal([["/pinned", `localhost:${pinnedPort}`]]);
    } finally {
      await pinnedReceiver.close();
    }
  });

  it("delivers to an IPv6 literal in sandbox ([::1])", async function () {
    let v6Receiver: WebhookReceiver;
    try {
      v6Receiver = await WebhookReceiver.start(undefined, "::1");
    } catch {
      this.skip();
    }
    const v6Port = v6Receiver.port;
    try {
      expect(await post({ url: `http://[::1]:${v6Port}/v6` })).to.deep.include({ responseStatus: 200, error: null });
      expect(v6Receiver.received.map((r) => [r.path, r.headers.host])).to.deep.equal([["/v6", `[::1]:${v6Port}`]]);
    } finally {
      await v6Receiver.close();
    }
  });

  it("throws for a programming error rather than reporting a network failure", async () => {
    let thrown: unknown;
    try {
      await post({ timeoutMs: 0 });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).to.be.instanceOf(RangeError);
  });

  describe("over TLS", () => {
    const key = readFileSync(new URL("self-signed-localhost.key.pem", fixtures));
    const cert = readFileSync(new URL("self-signed-localhost.cert.pem", fixtures));
    const serverNames: Array<string | null> = [];
    let tlsReceiver: WebhookReceiver;
    let tlsPort = 0;
    before(async () => {
      tlsReceiver = await WebhookReceiver.start(undefined, "127.0.0.1", {
        key,
        cert,
        // Records the SNI each client sent: the certificate is checked against the host name, not the pinned IP.
        SNICallback: (servername, callback) => {
          serverNames.push(servername);
          callback(null, createSecureContext({ key, cert }));
        },
      });
      tlsPort = tlsReceiver.port;
    });
    after(() => tlsReceiver.close());

    it("gives tls_error for a self-signed certificate, by IP literal and by name", async () => {
      expect(await post({ url: `https://127.0.0.1:${tlsPort}/` })).to.deep.include({ responseStatus: null, error: "tls_error" });
      expect(await post({ url: `https://localhost:${tlsPort}/`, lookup: lookupReturning("127.0.0.1") })).to.deep.include({
        responseStatus: null,
        error: "tls_error",
      });
      expect(tlsReceiver.received).to.have.length(0);
      // No SNI for the IP literal (RFC 6066); the host name for the name pinned to 127.0.0.1.
      expect(serverNames).to.deep.equal(["localhost"]);
    });

    it("gives tls_error when https meets a plain HTTP server", async () => {
      expect(await post({ url: `https://127.0.0.1:${port}/` })).to.deep.include({ responseStatus: null, error: "tls_error" });
    });
  });
});

describe("networkErrorCode", () => {
  const withCode = (code: string) => Object.assign(new Error(code), { code });
  const table: ReadonlyArray<[string, string]> = [
    ["ECONNREFUSED", "connection_refused"],
    ["ECONNRESET", "connection_reset"],
    ["EPIPE", "connection_reset"],
    ["ETIMEDOUT", "timeout"],
    ["ABORT_ERR", "timeout"],
    ["EHOSTUNREACH", "host_unreachable"],
    ["ENETUNREACH", "host_unreachable"],
    ["ENOTFOUND", "dns_error"],
    ["EAI_AGAIN", "dns_error"],
    ["DEPTH_ZERO_SELF_SIGNED_CERT", "tls_error"],
    ["CERT_HAS_EXPIRED", "tls_error"],
    ["ERR_TLS_CERT_ALTNAME_INVALID", "tls_error"],
    ["ERR_SSL_WRONG_VERSION_NUMBER", "tls_error"],
    ["EPROTO", "tls_error"],
    ["HPE_INVALID_CONSTANT", "connection_error"],
    ["EWHATEVER", "connection_error"],
  ];
  for (const [code, expected] of table) {
    it(`maps ${code} to ${expected}`, () => expect(networkErrorCode(withCode(code))).to.equal(expected));
  }

  it("maps errors without a code, and aggregated attempts", () => {
    expect(networkErrorCode(new Error("odd"))).to.equal("connection_error");
    expect(networkErrorCode(null)).to.equal("connection_error");
    expect(networkErrorCode(new AggregateError([withCode("EHOSTUNREACH"), withCode("ECONNREFUSED")]))).to.equal("host_unreachable");
  });
});
