// Endpoint URLs through the service: sandbox loopback URLs may not aim at the host's own services (the sensitive
// ports, this service's ports, its database's port), at creation, update and every attempt; and every spelling of
// one address is one endpoint, stored and answered in its normalised form.
import { expect } from "chai";
import { databasePorts } from "../../src/store/database.ts";
import { postWebhook } from "../../src/webhooks/delivery-client.ts";
import { expectError } from "../support/errors.ts";
import type { TestService } from "../support/test-service.ts";
import { createEndpoint, startWebhookTestService } from "./support/fixtures.ts";
import { FakeDns } from "./support/fake-dns.ts";
import { WebhookReceiver } from "./support/receiver.ts";

describe("webhook endpoint URLs", () => {
  let svc: TestService;
  const dns = new FakeDns();
  let httpPort = 0;
  let grpcPort = 0;
  let dbPort = 0;
  before(async () => {
    dns.records.set("hooks.example.com", "93.184.216.34");
    dns.records.set("localhost", "127.0.0.1");
    svc = await startWebhookTestService({ webhookLookup: dns.lookup });
    httpPort = Number(new URL(svc.baseUrl).port);
    grpcPort = Number(svc.grpcAddress.split(":").pop());
    dbPort = databasePorts(svc.database)[0]!;
  });
  after(async () => {
    await svc.stop();
  });
  afterEach(async () => {
    const list = await svc.request("GET", "/v1/webhook-endpoints?limit=100");
    for (const endpoint of list.body.data) await svc.request("DELETE", `/v1/webhook-endpoints/${endpoint.id}`);
  });

  describe("sandbox loopback ports", () => {
    it("refuses the service's own ports, its database's port and the sensitive ports at creation", async () => {
      expect(dbPort).to.be.greaterThan(0);
      const refused = [
        `http://127.0.0.1:${httpPort}/v1/users`,
        `http://localhost:${grpcPort}/`,
        `http://[::1]:${dbPort}/`,
        `https://localhost:${dbPort}/x`,
        "http://localhost:22/",
        "http://127.0.0.1:6379/",
        "http://[::1]:2375/containers/json",
        "http://localhost:27017/",
      ];
      for (const url of refused) {
        const response = await svc.request("POST", "/v1/webhook-endpoints", { body: { url } });
        expectError(response, 422, "invalid_request_error", "invalid_webhook_url", "url");
        expect(response.body.error.message, url).to.match(/port/);
      }
      // Any other loopback port stays open to sandbox endpoints.
      await createEndpoint(svc, { url: "http://localhost:3999/hooks" });
    });

    it("refuses them on update", async () => {
      const endpoint = await createEndpoint(svc, { url: "http://127.0.0.1:3998/hooks" });
      for (const url of [`http://127.0.0.1:${httpPort}/`, `http://localhost:${dbPort}/`, "http://[::1]:5432/"]) {
        const response = await svc.request("PATCH", `/v1/webhook-endpoints/${endpoint.id}`, { body: { url } });
        expectError(response, 422, "invalid_request_error", "invalid_webhook_url", "url");
      }
      const unchanged = await svc.request("GET", `/v1/webhook-endpoints/${endpoint.id}`);
      expect(unchanged.body.url).to.equal("http://127.0.0.1:3998/hooks");
    });

    it("refuses them at every attempt: a stored endpoint on the service's port is never connected to", async () => {
      const endpoint = await createEndpoint(svc, { url: "http://127.0.0.1:3997/hooks" });
      // As if stored before the rule existed.
      await svc.database.db
        .collection("webhook_endpoints")
        .updateOne({ _id: endpoint.id }, { $set: { url: `http://127.0.0.1:${httpPort}/v1/users` } });
      const test = await svc.request("POST", `/v1/webhook-endpoints/${endpoint.id}/test`);
      expect(test.status, test.text).to.equal(200);
      expect(test.body).to.include({ status: "failed", response_status: null, error: "ssrf_blocked" });
    });

    it("postWebhook refuses a loopback receiver on a refused port without connecting", async () => {
      const receiver = await WebhookReceiver.start();
      const port = receiver.port;
      try {
        const request = { url: `http://127.0.0.1:${port}/`, body: "{}", headers: {}, timeoutMs: 2000, livemode: false };
        expect(await postWebhook({ ...request, refusedLoopbackPorts: new Set([port]) })).to.include({ error: "ssrf_blocked", responseStatus: null });
        expect(receiver.received).to.have.length(0);
        expect(await postWebhook({ ...request, refusedLoopbackPorts: new Set([port + 1]) })).to.include({ error: null, responseStatus: 200 });
        expect(receiver.received).to.have.length(1);
      } finally {
        await receiver.close();
      }
    });
  });

  describe("one endpoint per normalised URL", () => {
    const SPELLINGS = [
      "https://hooks.example.com/u#x",
      "https://hooks.example.com./u",
      "https://hooks.example.com/u?",
      "https://hooks.example.com/%75",
      "HTTPS://HOOKS.EXAMPLE.COM:443/u",
    ];

    it("answers webhook_endpoint_exists for every other spelling of a created URL", async () => {
      const first = await createEndpoint(svc, { url: "https://hooks.example.com/u" });
      expect(first.url).to.equal("https://hooks.example.com/u");
      for (const url of SPELLINGS) {
        const response = await svc.request("POST", "/v1/webhook-endpoints", { body: { url } });
        expectError(response, 409, "invalid_request_error", "webhook_endpoint_exists");
      }
    });

    it("stores and answers the normalised URL, on creation and update", async () => {
      const created = await createEndpoint(svc, { url: "https://Hooks.Example.com./a/%62%7e?#frag" });
      expect(created.url).to.equal("https://hooks.example.com/a/b~");
      expect((await svc.request("GET", `/v1/webhook-endpoints/${created.id}`)).body.url).to.equal("https://hooks.example.com/a/b~");
      const updated = await svc.request("PATCH", `/v1/webhook-endpoints/${created.id}`, { body: { url: "https://hooks.example.com/%63?#" } });
      expect(updated.status, updated.text).to.equal(200);
      expect(updated.body.url).to.equal("https://hooks.example.com/c");
      const other = await createEndpoint(svc, { url: "https://hooks.example.com/d" });
      const clash = await svc.request("PATCH", `/v1/webhook-endpoints/${other.id}`, { body: { url: "https://hooks.example.com./%63#y" } });
      expectError(clash, 409, "invalid_request_error", "webhook_endpoint_exists");
    });
  });
});
