// The phases of an attempt (dns, connect, tls, first byte) and what an ssrf_blocked refusal names, against real
// local HTTP and HTTPS receivers; then the same through POST /v1/webhook-endpoints/{id}/test.
import { expect } from "chai";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { postWebhook, type AttemptResult, type WebhookRequest } from "../../src/webhooks/delivery-client.ts";
import type { TestService } from "../support/test-service.ts";
import { compiledEntry } from "../support/processes.ts";
import { createEndpoint, startWebhookTestService } from "./support/fixtures.ts";
import { FakeDns } from "./support/fake-dns.ts";
import { WebhookReceiver } from "./support/receiver.ts";

const fixtures = new URL("../fixtures/webhooks/", import.meta.url);
const CERT = fileURLToPath(new URL("self-signed-localhost.cert.pem", fixtures));
const KEY = fileURLToPath(new URL("self-signed-localhost.key.pem", fixtures));
const CLIENT = compiledEntry("src/webhooks/delivery-client.ts");

const post = (overrides: Partial<WebhookRequest>) =>
  postWebhook({ url: "http://127.0.0.1:1/", body: "{}", headers: {}, timeoutMs: 2000, livemode: false, ...overrides });

const loopback = async () => [{ address: "127.0.0.1", family: 4 }];

/**
 * One attempt made in a child process that trusts the self-signed fixture (NODE_EXTRA_CA_CERTS is read only at
 * start), so the TLS handshake completes as with a receiver's real certificate.
 */
function postTrusting(url: string): Promise<AttemptResult> {
  const script = `
    const { postWebhook } = await import(${JSON.stringify(CLIENT)});
    const lookup = async () => [{ address: "127.0.0.1", family: 4 }];
    const result = await postWebhook({ url: ${JSON.stringify(url)}, body: "{}", headers: {}, timeoutMs: 5000, livemode: false, lookup });
    process.stdout.write(JSON.stringify(result));`;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--input-type=module", "-e", script],
      { env: { ...process.env, NODE_EXTRA_CA_CERTS: CERT } },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout))),
    );
  });
}

function expectMs(value: unknown): void {
  expect(value).to.be.a("number").and.at.least(0);
}

describe("attempt timings and error detail", () => {
  let plain: WebhookReceiver;
  let secure: WebhookReceiver;
  let plainPort = 0;
  let securePort = 0;
  before(async () => {
    plain = await WebhookReceiver.start();
    secure = await WebhookReceiver.start(undefined, "127.0.0.1", { cert: readFileSync(CERT), key: readFileSync(KEY) });
    [plainPort, securePort] = [plain.port, secure.port];
  });
  after(async () => {
    await plain.close();
    await secure.close();
  });

  it("http to an IP literal: no DNS, no TLS; connect and first byte measured", async () => {
    const result = await post({ url: `http://127.0.0.1:${plainPort}/` });
    expect(result).to.include({ responseStatus: 200, error: null, errorDetail: null });
    expect(result.timings).to.include({ dnsMs: null, tlsMs: null });
    expectMs(result.timings!.connectMs);
    expectMs(result.timings!.firstByteMs);
  });

  it("http to a name: DNS measured too", async () => {
    const result = await post({ url: `http://localhost:${plainPort}/`, lookup: loopback });
    expect(result.error).to.equal(null);
    expectMs(result.timings!.dnsMs);
    expect(result.timings!.tlsMs).to.equal(null);
  });

  it("https with a trusted certificate, by name and by IP literal: every phase measured, DNS only for the name", async function () {
    this.timeout(20_000);
    const byName = await postTrusting(`https://localhost:${securePort}/`);
    expect(byName).to.include({ responseStatus: 200, error: null });
    for (const phase of ["dnsMs", "connectMs", "tlsMs", "firstByteMs"] as const) expectMs(byName.timings![phase]);
    const byAddress = await postTrusting(`https://127.0.0.1:${securePort}/`);
    expect(byAddress.error).to.equal(null);
    expect(byAddress.timings!.dnsMs).to.equal(null);
    for (const phase of ["connectMs", "tlsMs", "firstByteMs"] as const) expectMs(byAddress.timings![phase]);
  });

  it("https with a refused certificate: connected, but no completed TLS and no answer", async () => {
    const result = await post({ url: `https://127.0.0.1:${securePort}/` });
    expect(result).to.include({ error: "tls_error", responseStatus: null });
    expectMs(result.timings!.connectMs);
    expect(result.timings).to.include({ dnsMs: null, tlsMs: null, firstByteMs: null });
  });

  it("a refused connection: no phase completed", async () => {
    const closed = await WebhookReceiver.start();
    const port = closed.port;
    await closed.close();
    const result = await post({ url: `http://127.0.0.1:${port}/` });
    expect(result.error).to.equal("connection_refused");
    expect(result.timings).to.deep.equal({ dnsMs: null, connectMs: null, tlsMs: null, firstByteMs: null });
  });

  it("ssrf_blocked names the refused address class: by resolution (after DNS) and by the URL rules (before it)", async () => {
    const resolved = await post({ url: "https://hooks.example.com/", livemode: true, lookup: async () => [{ address: "10.1.2.3", family: 4 }] });
    expect(resolved).to.include({ error: "ssrf_blocked", errorDetail: "hooks.example.com resolves to a private address (10.0.0.0/8)." });
    expectMs(resolved.timings!.dnsMs);
    expect(resolved.timings).to.include({ connectMs: null, tlsMs: null, firstByteMs: null });

    const literal = await post({ url: "https://169.254.169.254/latest", livemode: true });
    expect(literal.error).to.equal("ssrf_blocked");
    expect(literal.errorDetail).to.match(/169\.254\.169\.254 is a link-local address \(169\.254\.0\.0\/16/);
    expect(literal.timings).to.deep.equal({ dnsMs: null, connectMs: null, tlsMs: null, firstByteMs: null });
  });

  it("a failure that is not ssrf_blocked has no detail", async () => {
    const result = await post({
      url: "https://no-such-host.invalid/",
      lookup: async () => {
        throw Object.assign(new Error("nx"), { code: "ENOTFOUND" });
      },
    });
    expect(result).to.include({ error: "dns_error", errorDetail: null });
    expectMs(result.timings!.dnsMs);
  });

  describe("POST /v1/webhook-endpoints/{id}/test", () => {
    const dns = new FakeDns();
    let svc: TestService;
    before(async () => {
      svc = await startWebhookTestService({ webhookLookup: dns.lookup });
    });
    after(async () => {
      await svc.stop();
    });

    it("answers the timings of the attempt, null where a phase did not happen, and error_detail null", async () => {
      const endpoint = await createEndpoint(svc, { url: `http://127.0.0.1:${plainPort}/test` });
      const response = await svc.request("POST", `/v1/webhook-endpoints/${endpoint.id}/test`);
      expect(response.status, response.text).to.equal(200);
      expect(response.body).to.include({ status: "succeeded", response_status: 200, error: null, error_detail: null });
      expect(response.body.timings).to.include({ dns_ms: null, tls_ms: null });
      expectMs(response.body.timings.connect_ms);
      expectMs(response.body.timings.first_byte_ms);
    });

    it("answers ssrf_blocked with the refused address class when the name has come to point inside", async () => {
      // Unresolvable at creation (accepted), then pointing at a private address when tested.
      const endpoint = await createEndpoint(svc, { url: "https://hooks.example.com/svc" });
      dns.records.set("hooks.example.com", "192.168.1.20");
      const response = await svc.request("POST", `/v1/webhook-endpoints/${endpoint.id}/test`);
      expect(response.status, response.text).to.equal(200);
      expect(response.body).to.include({
        status: "failed",
        error: "ssrf_blocked",
        error_detail: "hooks.example.com resolves to a private address (192.168.0.0/16).",
        response_status: null,
      });
      expect(response.body.timings).to.include({ connect_ms: null, tls_ms: null, first_byte_ms: null });
      expectMs(response.body.timings.dns_ms);
    });
  });
});
