// The endpoint routes over REST: fields, secrets, updates, rotation, limits, isolation and every error code.
import { expect } from "chai";
import { expectError } from "../support/errors.ts";
import type { TestService } from "../support/test-service.ts";
import { createOtherProject } from "../support/tenancy.ts";
import { createEndpoint, startWebhookTestService } from "./support/fixtures.ts";
import { FakeDns } from "./support/fake-dns.ts";

const ENDPOINT_FIELDS = [
  "created_at",
  "description",
  "disabled_reason",
  "enabled",
  "event_types",
  "id",
  "livemode",
  "object",
  "previous_secret_expires_at",
  "secret_last4",
  "updated_at",
  "url",
];
const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe("webhook endpoint routes", () => {
  let svc: TestService;
  const dns = new FakeDns();
  let other: { projectId: string; sandboxKey: string; liveKey: string };
  before(async () => {
    dns.records.set("hooks.example.com", "93.184.216.34");
    dns.records.set("loopback.example.com", "127.0.0.1");
    svc = await startWebhookTestService({ webhookLookup: dns.lookup });
    other = await createOtherProject(svc);
  });
  after(async () => {
    await svc.stop();
  });
  afterEach(async () => {
    for (const key of [svc.sandboxKey, svc.liveKey]) {
      const list = await svc.request("GET", "/v1/webhook-endpoints?limit=100", { key });
      for (const endpoint of list.body.data) await svc.request("DELETE", `/v1/webhook-endpoints/${endpoint.id}`, { key });
    }
  });

  it("creates an endpoint with defaults, answering 201 with the secret once", async () => {
    const response = await svc.request("POST", "/v1/webhook-endpoints", { body: { url: "HTTPS://Hooks.Example.com:443/a?b=1" } });
    expect(response.status).to.equal(201);
    const endpoint = response.body;
    expect(Object.keys(endpoint).sort()).to.deep.equal([...ENDPOINT_FIELDS, "secret"].sort());
    expect(endpoint).to.include({
      object: "webhook_endpoint",
      url: "https://hooks.example.com/a?b=1",
      description: "",
      enabled: true,
      disabled_reason: null,
      previous_secret_expires_at: null,
      livemode: false,
    });
    expect(endpoint.id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(endpoint.event_types).to.deep.equal(["*"]);
    expect(endpoint.secret).to.match(/^whsec_[0-9A-Za-z]{32}$/);
    expect(endpoint.secret_last4).to.equal(endpoint.secret.slice(-4));
    expect(endpoint.created_at).to.match(RFC3339_MS);
    expect(endpoint.updated_at).to.equal(endpoint.created_at);

    const read = await svc.request("GET", `/v1/webhook-endpoints/${endpoint.id}`);
    expect(read.status).to.equal(200);
    expect(Object.keys(read.body).sort()).to.deep.equal(ENDPOINT_FIELDS);
    const { secret: _secret, ...withoutSecret } = endpoint;
    expect(read.body).to.deep.equal(withoutSecret);
  });

  it("replays a creation with the same Idempotency-Key", async () => {
    const headers = { "Idempotency-Key": "create-endpoint-once" };
    const first = await svc.request("POST", "/v1/webhook-endpoints", { body: { url: "https://hooks.example.com/idem" }, headers });
    const second = await svc.request("POST", "/v1/webhook-endpoints", { body: { url: "https://hooks.example.com/idem" }, headers });
    expect(first.status).to.equal(201);
    expect(second.status).to.equal(201);
    expect(second.headers.get("idempotent-replayed")).to.equal("true");
    expect(second.body).to.deep.equal(first.body);
  });

  it("lists endpoints newest first with pagination", async () => {
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await createEndpoint(svc, { url: `https://hooks.example.com/${i}`, description: `n${i}` }));
    const page = await svc.request("GET", "/v1/webhook-endpoints?limit=2");
    expect(page.status).to.equal(200);
    expect(page.body).to.include({ object: "list", url: "/v1/webhook-endpoints", has_more: true });
    expect(page.body.data.map((e: any) => e.id)).to.deep.equal([made[2].id, made[1].id]);
    expect(page.body.data[0]).not.to.have.property("secret");
    const rest = await svc.request("GET", `/v1/webhook-endpoints?limit=2&starting_after=${made[1].id}`);
    expect(rest.body.data.map((e: any) => e.id)).to.deep.equal([made[0].id]);
    expect(rest.body.has_more).to.equal(false);
    expectError(await svc.request("GET", "/v1/webhook-endpoints?starting_after=nope"), 400, "invalid_request_error", "invalid_cursor");
    expectError(await svc.request("GET", "/v1/webhook-endpoints?limit=101"), 422, "invalid_request_error", "validation_error", "limit");
  });

  it("updates url, description, event types and enabled; re-checks the URL", async () => {
    const endpoint = await createEndpoint(svc, { url: "https://hooks.example.com/u" });
    const patched = await svc.request("PATCH", `/v1/webhook-endpoints/${endpoint.id}`, {
      body: { url: "https://hooks.example.com/v", description: "orders", event_types: ["user.created", "kyc.approved"] },
    });
    expect(patched.status).to.equal(200);
    expect(patched.body).to.include({ url: "https://hooks.example.com/v", description: "orders", enabled: true });
    expect(patched.body.event_types).to.deep.equal(["user.created", "kyc.approved"]);
    expect(patched.body).not.to.have.property("secret");
    expect(patched.body.updated_at >= endpoint.updated_at).to.equal(true);

    const disabled = await svc.request("PATCH", `/v1/webhook-endpoints/${endpoint.id}`, { body: { enabled: false } });
    expect(disabled.body).to.include({ enabled: false, disabled_reason: "manual" });
    const enabled = await svc.request("PATCH", `/v1/webhook-endpoints/${endpoint.id}`, { body: { enabled: true } });
    expect(enabled.body).to.include({ enabled: true, disabled_reason: null });

    const refused = await svc.request("PATCH", `/v1/webhook-endpoints/${endpoint.id}`, { body: { url: "https://10.0.0.1/" } });
    expectError(refused, 422, "invalid_request_error", "invalid_webhook_url", "url");
    expectError(
      await svc.request("PATCH", `/v1/webhook-endpoints/${endpoint.id}`, { body: { description: null } }),
      422,
      "invalid_request_error",
      "validation_error",
      "description",
    );
    expectError(
      await svc.request("PATCH", `/v1/webhook-endpoints/${endpoint.id}`, { body: { event_types: [] } }),
      422,
      "invalid_request_error",
      "validation_error",
      "event_types",
    );
    // On creation too: an empty list would otherwise subscribe to everything.
    expectError(
      await svc.request("POST", "/v1/webhook-endpoints", { body: { url: "https://hooks.example.com/empty-types", event_types: [] } }),
      422,
      "invalid_request_error",
      "validation_error",
      "event_types",
    );
    expectError(
      await svc.request("PATCH", `/v1/webhook-endpoints/${endpoint.id}`, { body: { secret: "whsec_x" } }),
      422,
      "invalid_request_error",
      "validation_error",
      "secret",
    );
    const other = await createEndpoint(svc, { url: "https://hooks.example.com/w" });
    expectError(
      await svc.request("PATCH", `/v1/webhook-endpoints/${other.id}`, { body: { url: "https://HOOKS.example.com:443/v" } }),
      409,
      "invalid_request_error",
      "webhook_endpoint_exists",
    );
  });

  it("rotates the secret with a grace period, and with 0 drops the old one at once", async () => {
    const endpoint = await createEndpoint(svc, { url: "https://hooks.example.com/r" });
    const rotated = await svc.request("POST", `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { body: { grace_period_hours: 2 } });
    expect(rotated.status).to.equal(200);
    expect(rotated.body.secret)
      .to.match(/^whsec_/)
      .and.not.equal(endpoint.secret);
    expect(rotated.body.secret_last4).to.equal(rotated.body.secret.slice(-4));
    const expires = Date.parse(rotated.body.previous_secret_expires_at);
    expect(Math.abs(expires - (Date.now() + 2 * 3_600_000))).to.be.below(10_000);
    const byDefault = await svc.request("POST", `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`);
    expect(Math.abs(Date.parse(byDefault.body.previous_secret_expires_at) - (Date.now() + 24 * 3_600_000))).to.be.below(10_000);
    const immediate = await svc.request("POST", `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { body: { grace_period_hours: 0 } });
    expect(immediate.body.previous_secret_expires_at).to.equal(null);
    const read = await svc.request("GET", `/v1/webhook-endpoints/${endpoint.id}`);
    expect(read.body).not.to.have.property("secret");
    expect(read.body.secret_last4).to.equal(immediate.body.secret.slice(-4));
    for (const hours of [-1, 169, 1.5]) {
      expectError(
        await svc.request("POST", `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { body: { grace_period_hours: hours } }),
        422,
        "invalid_request_error",
        "validation_error",
        "grace_period_hours",
      );
    }
  });

  it("deletes an endpoint", async () => {
    const endpoint = await createEndpoint(svc, { url: "https://hooks.example.com/d" });
    const deleted = await svc.request("DELETE", `/v1/webhook-endpoints/${endpoint.id}`);
    expect(deleted.status).to.equal(200);
    expect(deleted.body).to.deep.equal({ id: endpoint.id, object: "webhook_endpoint", deleted: true });
    expectError(await svc.request("GET", `/v1/webhook-endpoints/${endpoint.id}`), 404, "invalid_request_error", "webhook_endpoint_not_found");
    expectError(await svc.request("DELETE", `/v1/webhook-endpoints/${endpoint.id}`), 404, "invalid_request_error", "webhook_endpoint_not_found");
  });

  it("validates the fields of a creation", async () => {
    const invalid = async (body: unknown, param: string) =>
      expectError(await svc.request("POST", "/v1/webhook-endpoints", { body }), 422, "invalid_request_error", "validation_error", param);
    await invalid({}, "url");
    await invalid({ url: 5 }, "url");
    await invalid({ url: "https://hooks.example.com/", event_types: ["user.created", "user.created"] }, "event_types");
    await invalid({ url: "https://hooks.example.com/", event_types: ["nope.created"] }, "event_types");
    await invalid({ url: "https://hooks.example.com/", event_types: ["webhook.test"] }, "event_types");
    await invalid({ url: "https://hooks.example.com/", event_types: ["*", "user.created"] }, "event_types");
    await invalid({ url: "https://hooks.example.com/", event_types: "user.created" }, "event_types");
    await invalid({ url: "https://hooks.example.com/", description: "x".repeat(501) }, "description");
    await invalid({ url: "https://hooks.example.com/", enabled: false }, "enabled");
    const eleven = [
      "user.created",
      "user.suspended",
      "user.unsuspended",
      "kyc.approved",
      "kyc.rejected",
      "transaction.received",
      "transaction.completed",
      "withdrawal.completed",
      "withdrawal.failed",
      "user.created",
      "kyc.approved",
    ];
    await invalid({ url: "https://hooks.example.com/", event_types: eleven }, "event_types");
    const ok = await createEndpoint(svc, { url: "https://hooks.example.com/ok", description: "y".repeat(500), event_types: eleven.slice(0, 9) });
    expect(ok.event_types).to.have.length(9);
    // Characters are counted as people count them: 500 emoji (1000 UTF-16 units) fit, 501 do not.
    await createEndpoint(svc, { url: "https://hooks.example.com/emoji", description: "🪝".repeat(500) });
    await invalid({ url: "https://hooks.example.com/emoji2", description: "🪝".repeat(501) }, "description");
    expectError(await svc.request("POST", "/v1/webhook-endpoints", { rawBody: "{not json" }), 400, "invalid_request_error", "invalid_json");
    expectError(await svc.request("POST", "/v1/webhook-endpoints", { key: null, body: {} }), 401, "authentication_error", "missing_api_key");
  });

  it("refuses a duplicate URL and a 21st endpoint per project and environment", async () => {
    await createEndpoint(svc, { url: "https://hooks.example.com/dup" });
    expectError(
      await svc.request("POST", "/v1/webhook-endpoints", { body: { url: "https://hooks.EXAMPLE.com:443/dup" } }),
      409,
      "invalid_request_error",
      "webhook_endpoint_exists",
    );
    // The same URL is free in another environment and another project.
    await createEndpoint(svc, { url: "https://hooks.example.com/dup" }, svc.liveKey);
    await createEndpoint(svc, { url: "https://hooks.example.com/dup" }, other.sandboxKey);
    for (let i = 1; i < 20; i++) await createEndpoint(svc, { url: `https://hooks.example.com/n${i}` });
    expectError(
      await svc.request("POST", "/v1/webhook-endpoints", { body: { url: "https://hooks.example.com/n20" } }),
      409,
      "invalid_request_error",
      "webhook_endpoint_limit",
    );
    await createEndpoint(svc, { url: "https://hooks.example.com/n20" }, svc.liveKey);
    await svc.request("DELETE", `/v1/webhook-endpoints/${(await createEndpoint(svc, { url: "https://hooks.example.com/x" }, other.sandboxKey)).id}`, {
      key: other.sandboxKey,
    });
    const list = await svc.request("GET", "/v1/webhook-endpoints?limit=100", { key: other.sandboxKey });
    for (const endpoint of list.body.data) await svc.request("DELETE", `/v1/webhook-endpoints/${endpoint.id}`, { key: other.sandboxKey });
  });

  it("keeps the limit when creations race for the last places: exactly 20 remain", async () => {
    const racing = await createOtherProject(svc);
    for (let i = 0; i < 18; i++) await createEndpoint(svc, { url: `https://hooks.example.com/race${i}` }, racing.sandboxKey);
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        svc.request("POST", "/v1/webhook-endpoints", { key: racing.sandboxKey, body: { url: `https://hooks.example.com/last${i}` } }),
      ),
    );
    expect(answers.filter((a) => a.status === 201)).to.have.length(2);
    for (const refused of answers.filter((a) => a.status !== 201)) expectError(refused, 409, "invalid_request_error", "webhook_endpoint_limit");
    const list = await svc.request("GET", "/v1/webhook-endpoints?limit=100", { key: racing.sandboxKey });
    expect(list.body.data).to.have.length(20);
  });

  it("answers 404 for the endpoints of another environment or project, on every route", async () => {
    const mine = await createEndpoint(svc, { url: "https://hooks.example.com/iso" });
    for (const key of [svc.liveKey, other.sandboxKey, other.liveKey]) {
      const routes: [string, string][] = [
        ["GET", `/v1/webhook-endpoints/${mine.id}`],
        ["PATCH", `/v1/webhook-endpoints/${mine.id}`],
        ["DELETE", `/v1/webhook-endpoints/${mine.id}`],
        ["POST", `/v1/webhook-endpoints/${mine.id}/rotate-secret`],
        ["POST", `/v1/webhook-endpoints/${mine.id}/test`],
        ["GET", `/v1/webhook-endpoints/${mine.id}/deliveries`],
        ["GET", `/v1/webhook-endpoints/${mine.id}/deliveries/whd_x`],
        ["POST", `/v1/webhook-endpoints/${mine.id}/deliveries/whd_x/replay`],
      ];
      for (const [method, path] of routes) {
        const response = await svc.request(method, path, { key, ...(method === "PATCH" ? { body: { description: "x" } } : {}) });
        expectError(response, 404, "invalid_request_error", "webhook_endpoint_not_found");
      }
      const list = await svc.request("GET", "/v1/webhook-endpoints", { key });
      expect(list.body.data.map((e: any) => e.id)).not.to.include(mine.id);
    }
    expect((await svc.request("GET", `/v1/webhook-endpoints/${mine.id}`)).body.description).to.equal("");
    expectError(
      await svc.request("GET", `/v1/webhook-endpoints/${mine.id}/deliveries/whd_unknown`),
      404,
      "invalid_request_error",
      "webhook_delivery_not_found",
    );
    expectError(
      await svc.request("POST", `/v1/webhook-endpoints/${mine.id}/deliveries/whd_unknown/replay`),
      404,
      "invalid_request_error",
      "webhook_delivery_not_found",
    );
    expectError(
      await svc.request("GET", `/v1/webhook-endpoints/${mine.id}/deliveries?status=lost`),
      422,
      "invalid_request_error",
      "validation_error",
      "status",
    );
    expectError(
      await svc.request("GET", `/v1/webhook-endpoints/${mine.id}/deliveries?starting_after=whd_unknown`),
      400,
      "invalid_request_error",
      "invalid_cursor",
    );
  });

  describe("URL rules at the service (SSRF corpus)", () => {
    const refused: [string, "sandbox" | "live"][] = [
      ["http://hooks.example.com/", "sandbox"],
      ["https://10.0.0.1/", "sandbox"],
      ["https://172.16.5.4/", "live"],
      ["https://192.168.1.1/", "live"],
      ["https://100.64.0.1/", "live"],
      ["https://0.0.0.0/", "sandbox"],
      ["https://127.0.0.1/", "live"],
      ["http://127.0.0.1:8080/", "live"],
      ["https://[::1]/", "live"],
      ["https://localhost/", "live"],
      ["https://2130706433/", "sandbox"],
      ["https://0177.0.0.1/", "sandbox"],
      ["https://0x7f.1/", "live"],
      ["https://127.1/", "sandbox"],
      ["https://169.254.169.254/latest/meta-data/", "live"],
      ["https://[fe80::1]/", "live"],
      ["https://metadata.google.internal/computeMetadata/v1/", "live"],
      ["https://[::ffff:127.0.0.1]/", "live"],
      ["https://[::ffff:a9fe:a9fe]/", "sandbox"],
      ["https://[2002:7f00:1::]/", "live"],
      ["https://[64:ff9b::10.1.2.3]/", "live"],
      ["https://[fd00::1]/", "live"],
      ["https://user:pass@hooks.example.com/", "live"],
      ["http://user@localhost:3000/", "sandbox"],
      ["https://hooks.example.com:22/", "live"],
      ["https://hooks.example.com:6379/", "sandbox"],
      ["https://hooks.example.com:27017/", "live"],
      ["https://intranet/", "live"],
      ["https://printer.local/", "live"],
      ["https://db.internal/", "sandbox"],
      ["https://router.home.arpa/", "live"],
      ["https://loopback.example.com/", "live"],
      ["ftp://hooks.example.com/", "live"],
      [`https://hooks.example.com/${"a".repeat(2048)}`, "live"],
    ];
    for (const [url, mode] of refused) {
      it(`refuses ${url.slice(0, 60)} (${mode})`, async () => {
        const response = await svc.request("POST", "/v1/webhook-endpoints", {
          body: { url },
          key: mode === "live" ? svc.liveKey : svc.sandboxKey,
        });
        expectError(response, 422, "invalid_request_error", "invalid_webhook_url", "url");
      });
    }

    it("accepts sandbox endpoints on localhost, 127.0.0.1 and [::1] over http, and public https names", async () => {
      for (const url of ["http://localhost:3000/a", "http://127.0.0.1:9/b", "http://[::1]:8080/c", "https://hooks.example.com/ok"]) {
        const response = await svc.request("POST", "/v1/webhook-endpoints", { body: { url } });
        expect(response.status, `${url}: ${response.text}`).to.equal(201);
      }
      // A name that does not resolve yet is accepted: every delivery resolves and vets again.
      expect((await svc.request("POST", "/v1/webhook-endpoints", { body: { url: "https://later.example.com/" }, key: svc.liveKey })).status).to.equal(
        201,
      );
    });
  });
});
