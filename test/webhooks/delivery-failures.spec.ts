// Each way an attempt fails, and its `error` code: through the synchronous test route (one attempt, no retry)
// and through a real delivery's record.
import { expect } from "chai";
import type { TestService } from "../support/test-service.ts";
import { createEndpoint, createUser, startWebhookTestService } from "./support/fixtures.ts";
import { FakeDns } from "./support/fake-dns.ts";
import { freePort } from "../support/processes.ts";
import { eventually } from "../support/eventually.ts";
import { WebhookReceiver } from "./support/receiver.ts";

describe("webhook attempt failures", () => {
  let svc: TestService;
  let receiver: WebhookReceiver;
  const dns = new FakeDns();
  before(async () => {
    dns.records.set("rebind.example.com", "93.184.216.34");
    // SVC_WEBHOOK_TIMEOUT_MS is 1000 in these services.
    svc = await startWebhookTestService({ webhookLookup: dns.lookup });
    receiver = await WebhookReceiver.start();
  });
  after(async () => {
    await receiver.close();
    await svc.stop();
  });

  async function testOnce(url: string, key = svc.sandboxKey): Promise<any> {
    const endpoint = await createEndpoint(svc, { url, event_types: ["kyc.rejected"] }, key);
    const response = await svc.request("POST", `/v1/webhook-endpoints/${endpoint.id}/test`, { key });
    await svc.request("DELETE", `/v1/webhook-endpoints/${endpoint.id}`, { key });
    expect(response.status, response.text).to.equal(200);
    expect(Object.keys(response.body).sort()).to.deep.equal([
      "duration_ms",
      "endpoint_id",
      "error",
      "error_detail",
      "event_id",
      "object",
      "response_status",
      "status",
      "timings",
    ]);
    expect(response.body).to.include({ object: "webhook_test", endpoint_id: endpoint.id });
    return response.body;
  }

  it("a 2xx answer succeeds", async () => {
    receiver.handler = (_req, res) => res.writeHead(204).end();
    const result = await testOnce(receiver.url("/ok"));
    expect(result).to.include({ status: "succeeded", response_status: 204, error: null });
    expect(result.duration_ms).to.be.a("number").and.at.least(0);
    expect(result.event_id).to.match(/^evt_/);
  });

  it("a 500 is http_500", async () => {
    receiver.handler = (_req, res) => res.writeHead(500).end("boom");
    expect(await testOnce(receiver.url("/500"))).to.include({ status: "failed", response_status: 500, error: "http_500" });
  });

  it("a redirect, even to a private address, is http_302 and never followed", async () => {
    const before = receiver.received.length;
    receiver.handler = (_req, res) => res.writeHead(302, { location: "http://10.0.0.1/internal" }).end();
    expect(await testOnce(receiver.url("/302"))).to.include({ status: "failed", response_status: 302, error: "http_302" });
    expect(receiver.received.length).to.equal(before + 1);
  });

  it("a receiver slower than the time-out is timeout, with no status", async () => {
    receiver.handler = (_req, res) => setTimeout(() => res.end("late"), 1500);
    const result = await testOnce(receiver.url("/slow"));
    expect(result).to.include({ status: "failed", response_status: null, error: "timeout" });
    expect(result.duration_ms).to.be.within(900, 1400);
  });

  it("a closed port is connection_refused", async () => {
    expect(await testOnce(`http://127.0.0.1:${await freePort()}/`)).to.include({
      status: "failed",
      response_status: null,
      error: "connection_refused",
    });
  });

  it("a connection reset mid-request is connection_reset", async () => {
    receiver.handler = (req) => req.socket.resetAndDestroy();
    expect(await testOnce(receiver.url("/reset"))).to.include({ status: "failed", response_status: null, error: "connection_reset" });
  });

  it("a name that does not resolve is dns_error", async () => {
    expect(await testOnce("https://nowhere.example.com/hook")).to.include({ status: "failed", response_status: null, error: "dns_error" });
  });

  it("a live name that resolves to 127.0.0.1 at delivery (rebinding) is ssrf_blocked, for tests and deliveries", async () => {
    const endpoint = await createEndpoint(svc, { url: "https://rebind.example.com/hook" }, svc.liveKey);
    dns.records.set("rebind.example.com", "127.0.0.1");
    const test = await svc.request("POST", `/v1/webhook-endpoints/${endpoint.id}/test`, { key: svc.liveKey });
    expect(test.body).to.include({ status: "failed", response_status: null, error: "ssrf_blocked" });
    // Created now, the same name is refused outright.
    const again = await svc.request("POST", "/v1/webhook-endpoints", { body: { url: "https://rebind.example.com/other" }, key: svc.liveKey });
    expect(again.status).to.equal(422);
    expect(again.body.error).to.include({ code: "invalid_webhook_url", param: "url" });

    await createUser(svc, svc.liveKey);
    const delivery = await eventually(
      async () => (await svc.request("GET", `/v1/webhook-endpoints/${endpoint.id}/deliveries`, { key: svc.liveKey })).body.data[0],
      (d: any) => d?.attempt_count >= 1 && d.last_attempt !== null,
    );
    expect(delivery.last_attempt).to.include({ error: "ssrf_blocked", response_status: null });
    await svc.request("DELETE", `/v1/webhook-endpoints/${endpoint.id}`, { key: svc.liveKey });
  });

  it("a test is logged as a webhook.test event that goes nowhere else, and does not count toward disabling", async () => {
    receiver.handler = (_req, res) => res.writeHead(500).end();
    const bystander = await createEndpoint(svc, { url: receiver.url("/bystander") });
    const endpoint = await createEndpoint(svc, { url: receiver.url("/tested") });
    const result = (await svc.request("POST", `/v1/webhook-endpoints/${endpoint.id}/test`)).body;
    const logged = await svc.request("GET", `/v1/events/${result.event_id}`);
    expect(logged.status).to.equal(200);
    expect(logged.body).to.include({ type: "webhook.test", livemode: false });
    expect(logged.body.data.message).to.be.a("string");
    const sent = receiver.forEvent(result.event_id);
    expect(sent).to.have.length(1);
    expect(sent[0]!.headers["svc-delivery-attempt"]).to.equal("1");
    expect(sent[0]!.body.data).to.deep.equal(logged.body.data);
    const stored = await svc.database.db.collection("webhook_endpoints").findOne({ _id: endpoint.id as never });
    expect(stored!.consecutive_failures).to.equal(0);
    for (const id of [bystander.id, endpoint.id]) {
      expect((await svc.request("GET", `/v1/webhook-endpoints/${id}/deliveries`)).body.data).to.deep.equal([]);
      await svc.request("DELETE", `/v1/webhook-endpoints/${id}`);
    }
  });

  it("a disabled endpoint still gets its test event", async () => {
    receiver.handler = (_req, res) => res.end();
    const endpoint = await createEndpoint(svc, { url: receiver.url("/disabled") });
    await svc.request("PATCH", `/v1/webhook-endpoints/${endpoint.id}`, { body: { enabled: false } });
    const result = (await svc.request("POST", `/v1/webhook-endpoints/${endpoint.id}/test`)).body;
    expect(result.status).to.equal("succeeded");
    await svc.request("DELETE", `/v1/webhook-endpoints/${endpoint.id}`);
  });
});
