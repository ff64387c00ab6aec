// The life of deliveries: retries to failed, automatic disabling, re-enabling, replay, rotation, deletion,
// which endpoints an event reaches, and a full queue.
import { expect } from "chai";
import { computeSignature } from "../../src/domain/webhook-signature.ts";
import { expectError } from "../support/errors.ts";
import type { TestService } from "../support/test-service.ts";
import { createEndpoint, createUser, publishKycApproved, sleep, startWebhookTestService, userCreatedEventId } from "./support/fixtures.ts";
import { eventually } from "../support/eventually.ts";
import { createOtherProject } from "../support/tenancy.ts";
import { WebhookReceiver } from "./support/receiver.ts";

async function deliveriesOf(svc: TestService, endpointId: string, query = "", key?: string): Promise<any[]> {
  const response = await svc.request("GET", `/v1/webhook-endpoints/${endpointId}/deliveries?limit=100${query}`, key ? { key } : {});
  expect(response.status, response.text).to.equal(200);
  return response.body.data;
}

async function settledDelivery(svc: TestService, endpointId: string, eventId: string): Promise<any> {
  return eventually(
    async () => (await deliveriesOf(svc, endpointId)).find((d) => d.event_id === eventId),
    (d) => d !== undefined && d.status !== "pending",
  );
}

/** The v1 values of a Svc-Signature header, in order, with its timestamp. */
function signatures(header: string): { t: string; v1: string[] } {
  const parts = header.split(",").map((p) => p.split("="));
  return { t: parts.find(([k]) => k === "t")![1]!, v1: parts.filter(([k]) => k === "v1").map(([, v]) => v!) };
}

describe("webhook delivery lifecycle", () => {
  let svc: TestService;
  let receiver: WebhookReceiver;
  before(async () => {
    svc = await startWebhookTestService();
    receiver = await WebhookReceiver.start();
  });
  after(async () => {
    await receiver.close();
    await svc.stop();
  });
  afterEach(async () => {
    receiver.handler = (_req, res) => res.end("ok");
    for (const key of [svc.sandboxKey, svc.liveKey]) {
      const list = await svc.request("GET", "/v1/webhook-endpoints?limit=100", { key });
      for (const endpoint of list.body.data) await svc.request("DELETE", `/v1/webhook-endpoints/${endpoint.id}`, { key });
    }
  });

  it("retries a failing delivery with attempts 1..7, then marks it failed", async () => {
    receiver.handler = (_req, res) => res.writeHead(503).end();
    const endpoint = await createEndpoint(svc, { url: receiver.url("/retry") });
    const user = await createUser(svc);
    const eventId = await userCreatedEventId(svc, user.id);
    const delivery = await settledDelivery(svc, endpoint.id, eventId);
    expect(delivery).to.include({ status: "failed", attempt_count: 7, next_attempt_at: null });
    expect(delivery.last_attempt).to.include({ response_status: 503, error: "http_503" });
    const attempts = receiver.forEvent(eventId).map((r) => r.headers["svc-delivery-attempt"]);
    expect(attempts).to.deep.equal(["1", "2", "3", "4", "5", "6", "7"]);
    // The retries keep the schedule's spacing (50 ms here).
    const times = receiver.forEvent(eventId).map((r) => r.receivedAt);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).to.be.at.least(40);
    await sleep(150);
    expect(receiver.forEvent(eventId)).to.have.length(7);
  });

  it("shows a delivery being retried as pending with its next attempt time", async () => {
    receiver.handler = (_req, res) => res.writeHead(500).end();
    const slow = await startWebhookTestService({ env: { SVC_WEBHOOK_RETRY_SCHEDULE: "1h,1h,1h,1h,1h,1h" } });
    try {
      const endpoint = await createEndpoint(slow, { url: receiver.url("/pending") });
      await createUser(slow);
      const [delivery] = await eventually(
        () => deliveriesOf(slow, endpoint.id),
        (list) => list[0]?.last_attempt != null,
      );
      expect(delivery).to.include({ status: "pending", attempt_count: 1 });
      expect(Date.parse(delivery.next_attempt_at) - Date.now()).to.be.within(3_500_000, 3_600_000);
      expect(await deliveriesOf(slow, endpoint.id, "&status=pending")).to.have.length(1);
      expect(await deliveriesOf(slow, endpoint.id, "&status=failed")).to.have.length(0);
      const read = await slow.request("GET", `/v1/webhook-endpoints/${endpoint.id}/deliveries/${delivery.id}`);
      expect(read.body).to.deep.equal(delivery);
      expectError(
        await slow.request("POST", `/v1/webhook-endpoints/${endpoint.id}/deliveries/${delivery.id}/replay`),
        409,
        "invalid_request_error",
        "delivery_in_progress",
      );
      // The delivery's job holds its retry, at the time the delivery shows: one job for the delivery.
      const jobs = await slow.database.db.collection("jobs").find({ name: "webhook-attempt", "data.deliveryId": delivery.id }).toArray();
      expect(jobs).to.have.length(1);
      expect((jobs[0]!.nextRunAt as Date).toISOString()).to.equal(delivery.next_attempt_at);
      await slow.request("DELETE", `/v1/webhook-endpoints/${endpoint.id}`);
      expect(await slow.database.db.collection("webhook_deliveries").countDocuments({ endpoint_id: endpoint.id })).to.equal(0);
      expectError(
        await slow.request("GET", `/v1/webhook-endpoints/${endpoint.id}/deliveries`),
        404,
        "invalid_request_error",
        "webhook_endpoint_not_found",
      );
    } finally {
      await slow.stop();
    }
  });

  it("disables an endpoint after 20 consecutive failed attempts, settles its pending deliveries, and re-enables", async () => {
    receiver.handler = (_req, res) => res.writeHead(500).end();
    const endpoint = await createEndpoint(svc, { url: receiver.url("/disable") });
    // 4 deliveries of up to 7 attempts: the 20th failure comes while some are still pending.
    const users = [await createUser(svc), await createUser(svc), await createUser(svc), await createUser(svc)];
    const disabled = await eventually(
      async () => (await svc.request("GET", `/v1/webhook-endpoints/${endpoint.id}`)).body,
      (e: any) => e.enabled === false,
    );
    expect(disabled.disabled_reason).to.equal("consecutive_failures");
    const deliveries = await eventually(
      () => deliveriesOf(svc, endpoint.id),
      (list) => list.every((d) => d.status === "failed"),
    );
    expect(deliveries).to.have.length(4);
    const attempts = deliveries.reduce((sum, d) => sum + d.attempt_count, 0);
    // Attempts already claimed by the other deliveries when the 20th failure was counted still go out.
    expect(attempts).to.be.within(20, 20 + 2 * 3);
    expect(deliveries.some((d) => d.last_attempt.error === "endpoint_disabled")).to.equal(true);
    await sleep(200);
    expect(receiver.received.filter((r) => users.some((u) => r.body?.data?.object?.id === u.id))).to.have.length(attempts);

    // While disabled, new events are recorded, failed with endpoint_disabled and 0 attempts, and not sent.
    const whileDisabled = await createUser(svc);
    const whileDisabledEventId = await userCreatedEventId(svc, whileDisabled.id);
    await sleep(100);
    const recorded = (await deliveriesOf(svc, endpoint.id)).find((d) => d.event_id === whileDisabledEventId);
    expect(recorded).to.include({ status: "failed", attempt_count: 0, next_attempt_at: null });
    expect(recorded.last_attempt).to.include({ error: "endpoint_disabled", response_status: null, duration_ms: 0 });
    expect(receiver.forEvent(whileDisabledEventId)).to.deep.equal([]);
    expectError(
      await svc.request("POST", `/v1/webhook-endpoints/${endpoint.id}/deliveries/${deliveries[0].id}/replay`),
      409,
      "invalid_request_error",
      "endpoint_disabled",
    );

    // Re-enabled: the count starts afresh, new events are delivered, and a failed delivery can be replayed.
    receiver.handler = (_req, res) => res.end("ok");
    const enabled = await svc.request("PATCH", `/v1/webhook-endpoints/${endpoint.id}`, { body: { enabled: true } });
    expect(enabled.body).to.include({ enabled: true, disabled_reason: null });
    const stored = await svc.database.db.collection("webhook_endpoints").findOne({ _id: endpoint.id as never });
    expect(stored!.consecutive_failures).to.equal(0);
    const next = await createUser(svc);
    const nextEventId = await userCreatedEventId(svc, next.id);
    expect((await settledDelivery(svc, endpoint.id, nextEventId)).status).to.equal("succeeded");

    const failed = deliveries[0];
    const replayed = await svc.request("POST", `/v1/webhook-endpoints/${endpoint.id}/deliveries/${failed.id}/replay`);
    expect(replayed.status).to.equal(200);
    expect(replayed.body).to.include({ id: failed.id, event_id: failed.event_id, status: "pending", attempt_count: 0 });
    const settled = await settledDelivery(svc, endpoint.id, failed.event_id);
    expect(settled).to.include({ status: "succeeded", attempt_count: 1 });
    const resent = receiver.forEvent(failed.event_id).at(-1)!;
    expect(resent.body.id).to.equal(failed.event_id);
    expect(resent.headers["svc-delivery-attempt"]).to.equal("1");
  });

  it("a success resets the run of failures", async () => {
    let calls = 0;
    receiver.handler = (_req, res) => res.writeHead(++calls % 5 === 0 ? 200 : 500).end();
    const endpoint = await createEndpoint(svc, { url: receiver.url("/flaky") });
    for (let i = 0; i < 5; i++) await createUser(svc);
    await eventually(
      () => deliveriesOf(svc, endpoint.id),
      (list) => list.length === 5 && list.every((d) => d.status !== "pending"),
    );
    expect((await svc.request("GET", `/v1/webhook-endpoints/${endpoint.id}`)).body.enabled).to.equal(true);
  });

  it("signs with both secrets during a rotation grace period (new first), and with the new one only after grace 0", async () => {
    const endpoint = await createEndpoint(svc, { url: receiver.url("/rotate") });
    const rotate = async (hours: number): Promise<string> =>
      (await svc.request("POST", `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { body: { grace_period_hours: hours } })).body.secret;
    /** The v1 values of the next delivery, beside the HMACs each given secret makes of it. */
    const nextDeliverySignedBy = async (...secrets: string[]) => {
      const user = await createUser(svc);
      const eventId = await userCreatedEventId(svc, user.id);
      await receiver.waitUntil(() => receiver.forEvent(eventId).length === 1);
      const received = receiver.forEvent(eventId)[0]!;
      const signed = signatures(String(received.headers["svc-signature"]));
      return { actual: signed.v1, expected: secrets.map((secret) => computeSignature(secret, Number(signed.t), received.rawBody)) };
    };
    const first = endpoint.secret;
    const second = await rotate(1);
    const during = await nextDeliverySignedBy(second, first);
    expect(during.actual).to.deep.equal(during.expected);

    // Rotating again drops the oldest: the new secret and the one it replaces sign.
    const third = await rotate(1);
    const twice = await nextDeliverySignedBy(third, second);
    expect(twice.actual).to.deep.equal(twice.expected);

    // Grace 0 stops the old secret at once.
    const fourth = await rotate(0);
    const after = await nextDeliverySignedBy(fourth);
    expect(after.actual).to.deep.equal(after.expected);
  });

  it("delivers an event only to the endpoints of its own environment and project", async () => {
    const other = await createOtherProject(svc);
    const sandbox = await createEndpoint(svc, { url: receiver.url("/sandbox") });
    const otherProject = await createEndpoint(svc, { url: receiver.url("/other-project") }, other.sandboxKey);
    // A live endpoint cannot point at a local receiver; its delivery records tell what reached it.
    const live = await createEndpoint(svc, { url: "https://unresolvable.example.com/live" }, svc.liveKey);

    const user = await createUser(svc);
    const eventId = await userCreatedEventId(svc, user.id);
    await receiver.waitUntil(() => receiver.forEvent(eventId).length >= 1);
    await sleep(100);
    const paths = receiver.forEvent(eventId).map((r) => r.headers["svc-event-id"] && r.body.project_id);
    expect(paths).to.deep.equal([svc.projectId]);
    expect(await deliveriesOf(svc, otherProject.id, "", other.sandboxKey)).to.have.length(0);
    expect(await deliveriesOf(svc, live.id, "", svc.liveKey)).to.have.length(0);

    const otherUser = await createUser(svc, other.sandboxKey);
    const otherEventId = await userCreatedEventId(svc, otherUser.id, other.sandboxKey);
    await receiver.waitUntil(() => receiver.forEvent(otherEventId).length === 1);
    expect(receiver.forEvent(otherEventId)[0]!.body.project_id).to.equal(other.projectId);
    expect((await deliveriesOf(svc, sandbox.id)).map((d) => d.event_id)).to.deep.equal([eventId]);

    const liveUser = await createUser(svc, svc.liveKey);
    const liveEventId = await userCreatedEventId(svc, liveUser.id, svc.liveKey);
    const liveDeliveries = await eventually(
      () => deliveriesOf(svc, live.id, "", svc.liveKey),
      (list) => list.length === 1,
    );
    expect(liveDeliveries[0].event_id).to.equal(liveEventId);
    expect(receiver.forEvent(liveEventId)).to.have.length(0);
    expect((await deliveriesOf(svc, sandbox.id)).map((d) => d.event_id)).to.deep.equal([eventId]);
    for (const endpoint of (await svc.request("GET", "/v1/webhook-endpoints", { key: other.sandboxKey })).body.data) {
      await svc.request("DELETE", `/v1/webhook-endpoints/${endpoint.id}`, { key: other.sandboxKey });
    }
  });

  it("delivers only the subscribed event types", async () => {
    const kycOnly = await createEndpoint(svc, { url: receiver.url("/kyc"), event_types: ["kyc.approved"] });
    const usersOnly = await createEndpoint(svc, { url: receiver.url("/users"), event_types: ["user.created", "kyc.rejected"] });
    const everything = await createEndpoint(svc, { url: receiver.url("/all") });
    const user = await createUser(svc);
    const userEventId = await userCreatedEventId(svc, user.id);
    const kycEventId = await publishKycApproved(svc, user.id);
    await receiver.waitUntil(() => receiver.forEvent(userEventId).length === 2 && receiver.forEvent(kycEventId).length === 2);
    await sleep(100);
    const types = async (id: string) => (await deliveriesOf(svc, id)).map((d) => d.event_type).sort();
    expect(await types(kycOnly.id)).to.deep.equal(["kyc.approved"]);
    expect(await types(usersOnly.id)).to.deep.equal(["user.created"]);
    expect(await types(everything.id)).to.deep.equal(["kyc.approved", "user.created"]);
    expect(receiver.forEvent(kycEventId)[0]!.body.data.object).to.include({ object: "kyc", user_id: user.id, status: "approved" });
  });

  it("records events past the pending limit as failed with queue_full and 0 attempts, replayable later", async () => {
    const small = await startWebhookTestService({ webhookMaxPendingPerEndpoint: 2, env: { SVC_WEBHOOK_RETRY_SCHEDULE: "1h,1h,1h,1h,1h,1h" } });
    try {
      receiver.handler = (_req, res) => res.writeHead(500).end();
      const endpoint = await createEndpoint(small, { url: receiver.url("/full") });
      for (let i = 0; i < 3; i++) await createUser(small);
      const list = await eventually(
        () => deliveriesOf(small, endpoint.id),
        (l) => l.length === 3 && l.filter((d) => d.attempt_count === 1).length === 2,
      );
      const full = list.filter((d) => d.status === "failed");
      expect(full).to.have.length(1);
      expect(full[0]).to.include({ attempt_count: 0, next_attempt_at: null });
      expect(full[0].last_attempt).to.include({ error: "queue_full", response_status: null });
      expect(receiver.forEvent(full[0].event_id)).to.have.length(0);
      receiver.handler = (_req, res) => res.end("ok");
      const replayed = await small.request("POST", `/v1/webhook-endpoints/${endpoint.id}/deliveries/${full[0].id}/replay`);
      expect(replayed.status).to.equal(200);
      await receiver.waitUntil(() => receiver.forEvent(full[0].event_id).length === 1);
    } finally {
      await small.stop();
    }
  });
});
