// What a receiver gets: signature (by the exported helper and by an independent HMAC), headers and body.
import { expect } from "chai";
import { createHmac } from "node:crypto";
import { verifyWebhookSignature } from "../../src/webhooks/verify-signature.ts";
import type { TestService } from "../support/test-service.ts";
import { createEndpoint, createUser, startWebhookTestService, userCreatedEventId } from "./support/fixtures.ts";
import { WebhookReceiver } from "./support/receiver.ts";

describe("webhook delivery request", () => {
  let svc: TestService;
  let receiver: WebhookReceiver;
  let secret: string;
  before(async () => {
    svc = await startWebhookTestService();
    receiver = await WebhookReceiver.start();
    secret = (await createEndpoint(svc, { url: receiver.url() })).secret;
  });
  after(async () => {
    await receiver.close();
    await svc.stop();
  });

  it("posts the signed user.created event with the Svc headers as soon as the user exists", async () => {
    const started = Date.now();
    const user = await createUser(svc);
    await receiver.waitUntil((all) => all.some((r) => r.body?.data?.object?.id === user.id), 2000);
    const received = receiver.received.find((r) => r.body?.data?.object?.id === user.id)!;
    expect(received.receivedAt - started).to.be.below(1000);
    const eventId = await userCreatedEventId(svc, user.id);

    expect(received.headers["svc-event-id"]).to.equal(eventId);
    expect(received.headers["svc-event-type"]).to.equal("user.created");
    expect(received.headers["svc-delivery-attempt"]).to.equal("1");
    expect(received.headers["user-agent"]).to.equal("Svc-Webhooks/1.0");
    expect(received.headers["content-type"]).to.equal("application/json");

    // Independent check: HMAC-SHA256 hex over "<t>.<raw body>" keyed with the whole secret.
    const header = String(received.headers["svc-signature"]);
    const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
    expect(match, header).to.not.equal(null);
    const expected = createHmac("sha256", secret).update(`${match![1]}.${received.rawBody}`).digest("hex");
    expect(match![2]).to.equal(expected);
    expect(Math.abs(Number(match![1]) - Date.now() / 1000)).to.be.below(5);
    expect(verifyWebhookSignature(received.rawBody, header, secret)).to.equal(true);
    expect(verifyWebhookSignature(received.rawBody, header, "whsec_wrong")).to.equal(false);

    // The body is the Event of the event log plus `created` and `project_id`.
    const logged = (await svc.request("GET", `/v1/events/${eventId}`)).body;
    expect(received.body).to.deep.equal({ ...logged, created: logged.created_at, project_id: svc.projectId });
    expect(Object.keys(received.body).sort()).to.deep.equal(["created", "created_at", "data", "id", "livemode", "object", "project_id", "type"]);
    expect(received.body.data.object).to.include({ id: user.id, object: "user" });
  });

  it("records the delivery as succeeded with its attempt", async () => {
    const user = await createUser(svc);
    const eventId = await userCreatedEventId(svc, user.id);
    const endpoints = (await svc.request("GET", "/v1/webhook-endpoints")).body.data;
    await receiver.waitUntil(() => receiver.forEvent(eventId).length === 1);
    let delivery: any;
    for (let i = 0; i < 40; i++) {
      const list = await svc.request("GET", `/v1/webhook-endpoints/${endpoints[0].id}/deliveries?limit=100`);
      delivery = list.body.data.find((d: any) => d.event_id === eventId);
      if (delivery?.status === "succeeded") break;
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(delivery).to.deep.include({
      object: "webhook_delivery",
      endpoint_id: endpoints[0].id,
      event_id: eventId,
      event_type: "user.created",
      status: "succeeded",
      attempt_count: 1,
      next_attempt_at: null,
    });
    expect(delivery.last_attempt).to.include({ response_status: 200, error: null });
    expect(delivery.last_attempt.duration_ms).to.be.a("number");
    expect(delivery.id).to.match(/^whd_/);
  });
});
