// What a retried creation answers when its first run was cut off (recovery points), and what a replayed
// endpoint creation shows once its signing secret no longer signs. Over REST, and for replays over Connect too.
import { expect } from "chai";
import { startTestService, type TestService } from "../support/test-service.ts";
import { cutOff } from "../support/idempotency.ts";
import { uniquePhone } from "../support/phones.ts";

describe("idempotent creations", () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  describe("a retry after the first run was cut off", () => {
    it("answers the user the first run wrote (201, same id), not user_already_exists", async () => {
      const body = { phone: uniquePhone() };
      const first = await svc.request("POST", "/v1/users", { body, headers: { "idempotency-key": "cut-user-1" } });
      expect(first.status).to.equal(201);
      await cutOff(svc, "cut-user-1");
      const retried = await svc.request("POST", "/v1/users", { body, headers: { "idempotency-key": "cut-user-1" } });
      expect(retried.status).to.equal(201);
      expect(retried.headers.get("idempotent-replayed")).to.equal(null);
      expect(retried.body).to.deep.equal(first.body);
      // Now stored: the next retry is a plain replay.
      const replayed = await svc.request("POST", "/v1/users", { body, headers: { "idempotency-key": "cut-user-1" } });
      expect(replayed.headers.get("idempotent-replayed")).to.equal("true");
      expect(replayed.body.id).to.equal(first.body.id);
    });

    it("answers the endpoint the first run wrote, with its secret, not webhook_endpoint_exists", async () => {
      const body = { url: "https://hooks.example.com/cut-off" };
      const first = await svc.request("POST", "/v1/webhook-endpoints", { body, headers: { "idempotency-key": "cut-endpoint-1" } });
      expect(first.status).to.equal(201);
      await cutOff(svc, "cut-endpoint-1");
      const retried = await svc.request("POST", "/v1/webhook-endpoints", { body, headers: { "idempotency-key": "cut-endpoint-1" } });
      expect(retried.status).to.equal(201);
      expect(retried.body.id).to.equal(first.body.id);
      expect(retried.body.secret).to.equal(first.body.secret);
    });

    it("creates the object when the first run was cut off before writing it", async () => {
      const body = { phone: uniquePhone() };
      const first = await svc.request("POST", "/v1/users", { body, headers: { "idempotency-key": "cut-user-2" } });
      await svc.database.db.collection("users").deleteOne({ _id: first.body.id });
      await cutOff(svc, "cut-user-2");
      const retried = await svc.request("POST", "/v1/users", { body, headers: { "idempotency-key": "cut-user-2" } });
      expect(retried.status).to.equal(201);
      expect(retried.body.id, "the id reserved for this key").to.equal(first.body.id);
    });
  });

  describe("a replayed endpoint creation", () => {
    const create = (key: string, path: string) =>
      svc.request("POST", "/v1/webhook-endpoints", { body: { url: `https://hooks.example.com/${path}` }, headers: { "idempotency-key": key } });

    it("shows the secret while it is the endpoint's signing secret", async () => {
      const first = await create("replay-secret-1", "r1");
      const replayed = await create("replay-secret-1", "r1");
      expect(replayed.headers.get("idempotent-replayed")).to.equal("true");
      expect(replayed.status).to.equal(201);
      expect(replayed.body).to.deep.equal(first.body);
    });

    it("after a rotation, answers the endpoint as a retrieval shows it: no secret", async () => {
      const first = await create("replay-secret-2", "r2");
      const rotated = await svc.request("POST", `/v1/webhook-endpoints/${first.body.id}/rotate-secret`, { body: { grace_period_hours: 0 } });
      expect(rotated.status).to.equal(200);
      const replayed = await create("replay-secret-2", "r2");
      expect(replayed.status).to.equal(201);
      expect(replayed.headers.get("idempotent-replayed")).to.equal("true");
      expect(replayed.body).to.not.have.property("secret");
      const retrieved = await svc.request("GET", `/v1/webhook-endpoints/${first.body.id}`);
      expect(replayed.body).to.deep.equal(retrieved.body);
      expect(replayed.body.secret_last4).to.equal(rotated.body.secret.slice(-4));
    });

    it("after a deletion, answers the creation without its secret", async () => {
      const first = await create("replay-secret-3", "r3");
      expect((await svc.request("DELETE", `/v1/webhook-endpoints/${first.body.id}`)).status).to.equal(200);
      const replayed = await create("replay-secret-3", "r3");
      expect(replayed.status).to.equal(201);
      const { secret: _secret, ...withoutSecret } = first.body;
      expect(replayed.body).to.deep.equal(withoutSecret);
    });

    it("over Connect, hides a rotated secret the same way", async () => {
      const call = () =>
        svc.request("POST", "/svc.v1.WebhookEndpointsService/CreateWebhookEndpoint", {
          body: { url: "https://hooks.example.com/connect-rotated" },
          headers: { "idempotency-key": "replay-secret-4" },
        });
      const first = await call();
      expect(first.status).to.equal(200);
      expect(first.body.webhook_endpoint.secret).to.match(/^whsec_/);
      await svc.request("POST", `/v1/webhook-endpoints/${first.body.webhook_endpoint.id}/rotate-secret`, { body: {} });
      const replayed = await call();
      expect(replayed.headers.get("idempotent-replayed")).to.equal("true");
      expect(replayed.body.webhook_endpoint.id).to.equal(first.body.webhook_endpoint.id);
      expect(replayed.body.webhook_endpoint).to.not.have.property("secret");
    });
  });
});
