// POST /v1/webhook-endpoints/{endpoint_id}/deliveries/{id}/retry: a pending delivery's next attempt runs at once,
// numbered and counted as on schedule; a settled one is 409 invalid_state, another project's 404; the console's
// "Retry now" does the same.
import { expect } from "chai";
import { expectError } from "../support/errors.ts";
import { uniquePhone } from "../support/phones.ts";
import { createKey, createProject } from "../support/tenancy.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { DashboardClient } from "../dashboard/support.ts";
import { WebhookReceiver } from "./support/receiver.ts";

describe("retry a pending delivery now", function () {
  this.timeout(30_000);
  let svc: TestService;
  let receiver: WebhookReceiver;
  let failing = true;
  before(async () => {
    // The first attempt fails; the next is an hour away unless retried now.
    svc = await startTestService({ env: { SVC_WEBHOOK_RETRY_SCHEDULE: "1h,1h,1h,1h,1h,1h" } });
    receiver = await WebhookReceiver.start((_req, res) => {
      res.statusCode = failing ? 500 : 200;
      res.end();
    });
  });
  after(async () => {
    await svc.stop();
    await receiver.close();
  });

  async function pendingDelivery(path: string) {
    const endpoint = await svc.request("POST", "/v1/webhook-endpoints", { body: { url: receiver.url(path), event_types: ["user.created"] } });
    await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
    let delivery: any;
    for (let i = 0; i < 50 && !delivery; i++) {
      const list = await svc.request("GET", `/v1/webhook-endpoints/${endpoint.body.id}/deliveries`);
      delivery = list.body.data.find((d: any) => d.attempt_count === 1 && d.last_attempt !== null);
      if (!delivery) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(delivery, "a delivery whose first attempt failed").to.include({ status: "pending", attempt_count: 1 });
    return { endpointId: endpoint.body.id as string, delivery };
  }

  it("runs the next attempt at once, counted as attempt 2; a settled delivery is invalid_state", async () => {
    const { endpointId, delivery } = await pendingDelivery("/retry-now");
    const before = receiver.forEvent(delivery.event_id).length;
    failing = false;
    const retried = await svc.request("POST", `/v1/webhook-endpoints/${endpointId}/deliveries/${delivery.id}/retry`);
    expect(retried.status).to.equal(200);
    expect(retried.body).to.include({ id: delivery.id, status: "pending" });
    await receiver.waitUntil(() => receiver.forEvent(delivery.event_id).length === before + 1, 10_000);
    expect(receiver.forEvent(delivery.event_id).at(-1)!.headers["svc-delivery-attempt"]).to.equal("2");
    let settled: any;
    for (let i = 0; i < 50; i++) {
      settled = (await svc.request("GET", `/v1/webhook-endpoints/${endpointId}/deliveries/${delivery.id}`)).body;
      if (settled.status === "succeeded") break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(settled).to.include({ status: "succeeded", attempt_count: 2 });
    expectError(
      await svc.request("POST", `/v1/webhook-endpoints/${endpointId}/deliveries/${delivery.id}/retry`),
      409,
      "invalid_request_error",
      "invalid_state",
    );
    failing = true;
  });

  it("is 404 for another project's delivery", async () => {
    const { endpointId, delivery } = await pendingDelivery("/retry-other");
    const other = await createProject(svc);
    const otherKey = (await createKey(svc, other.projectId)).secret;
    const refused = await svc.request("POST", `/v1/webhook-endpoints/${endpointId}/deliveries/${delivery.id}/retry`, { key: otherKey });
    expectError(refused, 404, "invalid_request_error", "webhook_endpoint_not_found");
  });

  it("is the console's Retry now on a pending delivery", async () => {
    const { endpointId, delivery } = await pendingDelivery("/retry-console");
    const client = new DashboardClient(svc);
    expect((await client.signIn(svc.sandboxKey)).status).to.equal(303);
    const action = `/dashboard/webhooks/${endpointId}/deliveries/${delivery.id}/retry`;
    const before = receiver.forEvent(delivery.event_id).length;
    const posted = await client.submit(`/dashboard/webhooks/${endpointId}`, action);
    expect(posted.status).to.equal(303);
    await receiver.waitUntil(() => receiver.forEvent(delivery.event_id).length === before + 1, 10_000);
  });
});
