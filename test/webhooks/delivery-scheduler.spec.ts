// When attempts run: the delivery record is the only schedule of its attempts. A failed attempt writes its retry
// time with its outcome; the poll of any process (or the timer of the one that wrote it) runs the retry once its
// time has come; an expired lease is taken over and counted; deleting an endpoint leaves nothing due; a replay
// starts over from the record alone. In process, on the embedded database, with a manual clock and a fake sender.
import { create } from "@bufbuild/protobuf";
import { expect } from "chai";
import { DeleteWebhookEndpointRequestSchema, ReplayWebhookDeliveryRequestSchema } from "../../gen/svc/v1/webhook_endpoints_pb.ts";
import { WebhookEndpointsServiceImpl } from "../../src/services/webhook-endpoints-service.ts";
import { LEASE_MARGIN_MS, MAX_DELIVERY_ATTEMPTS } from "../../src/webhooks/delivery-policy.ts";
import type { WebhookDelivery } from "../../src/webhooks/webhook-delivery.ts";
import { eventually } from "../support/eventually.ts";
import { DeliveryHarness, HTTP_500, OK, SCHEDULE_MS } from "./support/in-process.ts";

/** Runs one poll of `process` and waits for the attempts it started. */
async function poll(process: WebhookDelivery): Promise<void> {
  await process.scheduler.pollNow();
  await process.scheduler.whenIdle();
}

describe("DeliveryScheduler: the delivery record as the only schedule", () => {
  let h: DeliveryHarness;
  beforeEach(async () => {
    h = await DeliveryHarness.start();
  });
  afterEach(async () => {
    expect(h.errors).to.deep.equal([]);
    await h.close();
  });

  it("writes next_attempt_at = now + schedule[n-1] with the outcome of failed attempt n < 7, and nothing runs it before", async () => {
    h.sender.answer = () => HTTP_500;
    const endpoint = await h.addEndpoint();
    const event = await h.logEvent();
    const id = await h.recordDelivery(endpoint, event);
    const process = h.process();
    for (let n = 1; n < MAX_DELIVERY_ATTEMPTS; n++) {
      await poll(process);
      const failedAt = h.clock.read();
      const record = (await h.record(id))!;
      expect(record).to.include({ status: "pending", attempt_count: n, lease_until: null });
      expect(record.next_attempt_at!.getTime()).to.equal(failedAt.getTime() + SCHEDULE_MS[n - 1]!);
      expect(record.last_attempt).to.include({ error: "http_500", response_status: 500 });
      expect(h.sender.attemptsOf(event._id)).to.have.length(n);
      // No job anywhere: the record holds the retry; this process only keeps a wake-up for it.
      expect(await h.jobCount()).to.equal(0);
      expect(process.scheduler.pendingWakeUps).to.equal(n);

      // A moment before its time, no poll runs it.
      h.clock.advance(SCHEDULE_MS[n - 1]! - 1);
      await poll(process);
      expect(h.sender.attemptsOf(event._id)).to.have.length(n);
      h.clock.advance(1);
    }
    expect(h.sender.attemptsOf(event._id)).to.deep.equal([1, 2, 3, 4, 5, 6]);
  });

  it("runs a due retry found by the poll of a process that did not write it", async () => {
    h.sender.answer = () => HTTP_500;
    const endpoint = await h.addEndpoint();
    const event = await h.logEvent();
    const id = await h.recordDelivery(endpoint, event);
    const first = h.process();
    await poll(first);
    await first.stop(); // its wake-up goes with it

    const second = h.process();
    h.sender.answer = () => OK;
    h.clock.advance(SCHEDULE_MS[0]! + 5000);
    // Due for 5 s with nobody on it: what svc_webhook_delivery_lag_seconds shows.
    expect(await h.deliveries.lagSeconds(h.clock.read())).to.equal(5);
    await poll(second);
    expect(await h.deliveries.lagSeconds(h.clock.read())).to.equal(0);
    expect(h.sender.attemptsOf(event._id)).to.deep.equal([1, 2]);
    expect(await h.record(id)).to.include({ status: "succeeded", attempt_count: 2, next_attempt_at: null, lease_until: null });
  });

  it("wakes up for a retry it wrote at its time, without any poll", async () => {
    h.sender.answer = () => HTTP_500;
    const endpoint = await h.addEndpoint();
    const event = await h.logEvent();
    await h.recordDelivery(endpoint, event);
    const process = h.process({ retryScheduleMs: [40, 40, 40, 40, 40, 40] });
    await poll(process);
    expect(process.scheduler.pendingWakeUps).to.equal(1);
    // The manual clock reaches the retry time before the real timer (40 ms) fires.
    h.clock.advance(40);
    h.sender.answer = () => OK;
    await eventually(
      async () => h.sender.attemptsOf(event._id),
      (attempts) => attempts.length === 2,
      2000,
    );
    await process.scheduler.whenIdle();
    expect(h.sender.attemptsOf(event._id)).to.deep.equal([1, 2]);
    expect(process.scheduler.pendingWakeUps).to.equal(0);
  });

  it("takes over an attempt whose lease expired (its worker died), counting the lost attempt", async () => {
    const endpoint = await h.addEndpoint();
    const held = await h.logEvent();
    const lost = await h.logEvent();
    const now = h.clock.read();
    const past = new Date(now.getTime() - 60_000);
    // Attempt 3 claimed by a worker that is still within its lease, and one whose lease ran out.
    const heldId = await h.recordDelivery(endpoint, held, { attempt_count: 3, next_attempt_at: past, lease_until: new Date(now.getTime() + 1000) });
    const lostId = await h.recordDelivery(endpoint, lost, { attempt_count: 3, next_attempt_at: past, lease_until: new Date(now.getTime() - 1) });
    const process = h.process();
    await poll(process);
    expect(h.sender.sent.map((s) => [s.eventId, s.attempt])).to.deep.equal([[lost._id, 4]]);
    expect(await h.record(lostId)).to.include({ status: "succeeded", attempt_count: 4 });
    expect(await h.record(heldId)).to.include({ status: "pending", attempt_count: 3 });

    // Once that lease ends too, the attempt after the lost one is sent.
    h.clock.advance(1000);
    await poll(process);
    expect(h.sender.attemptsOf(held._id)).to.deep.equal([4]);
  });

  it("settles a delivery as failed, with no next attempt, when attempt 7 fails", async () => {
    h.sender.answer = () => HTTP_500;
    const endpoint = await h.addEndpoint();
    const event = await h.logEvent();
    const id = await h.recordDelivery(endpoint, event, { attempt_count: 6 });
    const process = h.process();
    await poll(process);
    expect(h.sender.attemptsOf(event._id)).to.deep.equal([7]);
    const record = (await h.record(id))!;
    expect(record).to.include({ status: "failed", attempt_count: 7, next_attempt_at: null, lease_until: null });
    expect(record.last_attempt).to.include({ error: "http_500" });
    expect(process.scheduler.pendingWakeUps).to.equal(0);
    h.clock.advance(SCHEDULE_MS.at(-1)! * 2);
    await poll(process);
    expect(h.sender.sent).to.have.length(1);
  });

  it("settles as failed (internal_error) a delivery whose 7th attempt a crash cut short", async () => {
    const endpoint = await h.addEndpoint();
    const event = await h.logEvent();
    const now = h.clock.read();
    const id = await h.recordDelivery(endpoint, event, { attempt_count: 7, lease_until: new Date(now.getTime() - 1000 - LEASE_MARGIN_MS) });
    await poll(h.process());
    expect(h.sender.sent).to.deep.equal([]);
    const record = (await h.record(id))!;
    expect(record).to.include({ status: "failed", attempt_count: 7, next_attempt_at: null });
    expect(record.last_attempt).to.include({ error: "internal_error" });
  });

  it("leaves no schedule anywhere once an endpoint is deleted", async () => {
    h.sender.answer = () => HTTP_500;
    const endpoint = await h.addEndpoint();
    const event = await h.logEvent();
    await h.recordDelivery(endpoint, event);
    const process = h.process();
    await poll(process);
    expect((await h.recordsOf(endpoint._id))[0]).to.include({ status: "pending", attempt_count: 1 });

    const service = new WebhookEndpointsServiceImpl({
      endpoints: h.endpoints,
      deliveries: h.deliveries,
      events: h.events,
      clock: h.clock.read,
      send: { timeoutMs: 1000, clock: h.clock.read },
      dispatch: (id) => process.dispatch(id),
      recovery: process.recovery,
    });
    await service.deleteWebhookEndpoint(create(DeleteWebhookEndpointRequestSchema, { id: endpoint._id }), h.callerContext());
    expect(await h.recordsOf(endpoint._id)).to.deep.equal([]);
    expect(await h.jobCount()).to.equal(0);
    expect(await h.database.db.collection("webhook_deliveries").countDocuments({ status: "pending" })).to.equal(0);

    // The wake-up this process kept comes to nothing, and so does any poll.
    h.clock.advance(SCHEDULE_MS[0]!);
    await poll(process);
    await poll(h.process());
    expect(h.sender.sent).to.have.length(1);
  });

  it("starts a replayed delivery's new cycle from the record alone, in any process", async () => {
    h.sender.answer = () => HTTP_500;
    const endpoint = await h.addEndpoint();
    const event = await h.logEvent();
    const id = await h.recordDelivery(endpoint, event, { attempt_count: 6 });
    const first = h.process();
    await poll(first);
    expect(await h.record(id)).to.include({ status: "failed", attempt_count: 7 });
    await first.stop();

    // Replayed through an API process (it delivers nothing): only the record changes.
    const api = h.process({ deliversInProcess: false });
    const service = new WebhookEndpointsServiceImpl({
      endpoints: h.endpoints,
      deliveries: h.deliveries,
      events: h.events,
      clock: h.clock.read,
      send: { timeoutMs: 1000, clock: h.clock.read },
      dispatch: (deliveryId) => api.dispatch(deliveryId),
      recovery: api.recovery,
    });
    h.clock.advance(1000);
    await service.replayWebhookDelivery(create(ReplayWebhookDeliveryRequestSchema, { endpointId: endpoint._id, id }), h.callerContext());
    const replayed = (await h.record(id))!;
    expect(replayed).to.include({ status: "pending", attempt_count: 0, lease_until: null });
    expect(replayed.next_attempt_at!.getTime()).to.equal(h.clock.read().getTime());

    // A worker that never saw this delivery finds it, numbers the attempts from 1 again and retries as usual.
    const worker = h.process();
    await poll(worker);
    expect(h.sender.attemptsOf(event._id)).to.deep.equal([7, 1]);
    const retried = (await h.record(id))!;
    expect(retried).to.include({ status: "pending", attempt_count: 1 });
    expect(retried.next_attempt_at!.getTime()).to.equal(h.clock.read().getTime() + SCHEDULE_MS[0]!);
  });

  it("runs a replay at once in a delivering process (no poll needed)", async () => {
    const endpoint = await h.addEndpoint();
    const event = await h.logEvent();
    const id = await h.recordDelivery(endpoint, event, { status: "failed", attempt_count: 7, next_attempt_at: null });
    const process = h.process();
    const replayed = await h.deliveries.replay(endpoint._id, id, h.clock.read());
    process.dispatch(replayed!._id);
    await process.scheduler.whenIdle();
    expect(h.sender.attemptsOf(event._id)).to.deep.equal([1]);
    expect(await h.record(id)).to.include({ status: "succeeded", attempt_count: 1 });
  });

  it("sends each attempt once though two processes poll for the same deliveries", async () => {
    h.sender.answer = () => HTTP_500;
    // One endpoint per delivery, so that no endpoint reaches the failures that disable it.
    const events = await Promise.all(Array.from({ length: 20 }, () => h.logEvent()));
    for (const event of events) await h.recordDelivery(await h.addEndpoint(), event);
    const [a, b] = [h.process({ concurrency: 32 }), h.process({ concurrency: 32 })];
    for (let n = 1; n <= MAX_DELIVERY_ATTEMPTS; n++) {
      await Promise.all([poll(a), poll(b)]);
      h.clock.advance(SCHEDULE_MS[n - 1] ?? 0);
    }
    for (const event of events) expect(h.sender.attemptsOf(event._id)).to.deep.equal([1, 2, 3, 4, 5, 6, 7]);
    const records = await h.database.db.collection("webhook_deliveries").find({}).toArray();
    expect(records).to.have.length(20);
    expect(records.every((r) => r.status === "failed" && r.attempt_count === 7)).to.equal(true);
  });
});
