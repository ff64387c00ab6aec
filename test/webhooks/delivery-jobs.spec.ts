// When attempts run: each delivery has one Agenda job (`webhook-attempt`, unique by the delivery id), and its
// `nextRunAt` is the one schedule. A run of the job claims, sends and records an attempt and answers the job's
// next run (the retry time, also shown on the record as next_attempt_at), or ends it; an attempt whose process
// died is counted and followed at once; deleting an endpoint leaves jobs that end without sending; a replay
// writes the job again. In process, on the embedded database, with a manual clock and a fake sender; the job's
// runs are called as Agenda calls them (one test lets Agenda itself run them).
import { create } from "@bufbuild/protobuf";
import { expect } from "chai";
import { DeleteWebhookEndpointRequestSchema, ReplayWebhookDeliveryRequestSchema } from "../../gen/svc/v1/webhook_endpoints_pb.ts";
import { WebhookEndpointsServiceImpl } from "../../src/services/webhook-endpoints-service.ts";
import { decideAfterAttempt, LEASE_MARGIN_MS, MAX_DELIVERY_ATTEMPTS } from "../../src/webhooks/delivery-policy.ts";
import { DELETED_ENDPOINT_JOB, type WebhookDelivery } from "../../src/webhooks/webhook-delivery.ts";
import { eventually } from "../support/eventually.ts";
import { DeliveryHarness, HTTP_500, OK, SCHEDULE_MS } from "./support/in-process.ts";

describe("decideAfterAttempt: what follows an attempt", () => {
  const now = new Date("2030-01-01T00:00:00.000Z");
  const facts = { now, retryScheduleMs: SCHEDULE_MS, consecutiveFailures: null };
  it("succeeded; retry at now + schedule[n-1]; failed after the 7th; at once after a lost attempt", () => {
    expect(decideAfterAttempt({ ...facts, attempt: 1, error: null })).to.deep.equal({ delivery: { status: "succeeded" }, disableEndpoint: false });
    for (let n = 1; n < MAX_DELIVERY_ATTEMPTS; n++) {
      expect(decideAfterAttempt({ ...facts, attempt: n, error: "http_500" }).delivery).to.deep.equal({
        status: "pending",
        nextAttemptAt: new Date(now.getTime() + SCHEDULE_MS[n - 1]!),
      });
    }
    expect(decideAfterAttempt({ ...facts, attempt: 7, error: "timeout" }).delivery).to.deep.equal({ status: "failed" });
    expect(decideAfterAttempt({ ...facts, attempt: 3, error: "internal_error", lost: true }).delivery).to.deep.equal({
      status: "pending",
      nextAttemptAt: now,
    });
    expect(decideAfterAttempt({ ...facts, attempt: 7, error: "internal_error", lost: true }).delivery).to.deep.equal({ status: "failed" });
  });
  it("disables the endpoint at its 20th consecutive failure, never on a success or an uncounted failure", () => {
    expect(decideAfterAttempt({ ...facts, attempt: 2, error: "http_500", consecutiveFailures: 19 }).disableEndpoint).to.equal(false);
    expect(decideAfterAttempt({ ...facts, attempt: 2, error: "http_500", consecutiveFailures: 20 })).to.deep.include({ disableEndpoint: true });
    expect(decideAfterAttempt({ ...facts, attempt: 7, error: "http_500", consecutiveFailures: 25 })).to.deep.equal({
      delivery: { status: "failed" },
      disableEndpoint: true,
    });
    expect(decideAfterAttempt({ ...facts, attempt: 2, error: null, consecutiveFailures: 20 }).disableEndpoint).to.equal(false);
    expect(decideAfterAttempt({ ...facts, attempt: 2, error: "internal_error", consecutiveFailures: null }).disableEndpoint).to.equal(false);
  });
});

describe("the delivery's job as the one schedule of its attempts", () => {
  let h: DeliveryHarness;
  beforeEach(async () => {
    h = await DeliveryHarness.start();
  });
  afterEach(async () => {
    expect(h.errors).to.deep.equal([]);
    await h.close();
  });

  /** Runs the delivery's job as Agenda would; answers its next run. */
  const run = (process: WebhookDelivery, id: string) => process.runJob(id);

  it("answers now + schedule[n-1] after failed attempt n < 7, the record showing the same time; ends after a success", async () => {
    h.sender.answer = () => HTTP_500;
    const endpoint = await h.addEndpoint();
    const event = await h.logEvent();
    const id = await h.recordDelivery(endpoint, event);
    const process = await h.process();
    for (let n = 1; n < MAX_DELIVERY_ATTEMPTS; n++) {
      const failedAt = h.clock.read();
      const next = await run(process, id);
      const record = (await h.record(id))!;
      expect(record).to.include({ status: "pending", attempt_count: n, lease_until: null });
      expect(next!.getTime()).to.equal(failedAt.getTime() + SCHEDULE_MS[n - 1]!);
      expect(record.next_attempt_at!.getTime()).to.equal(next!.getTime());
      expect(record.last_attempt).to.include({ error: "http_500", response_status: 500 });
      h.clock.advance(SCHEDULE_MS[n - 1]!);
    }
    h.sender.answer = () => OK;
    expect(await run(process, id)).to.equal(undefined);
    expect(h.sender.attemptsOf(event._id)).to.deep.equal([1, 2, 3, 4, 5, 6, 7]);
    expect(await h.record(id)).to.include({ status: "succeeded", attempt_count: 7, next_attempt_at: null, lease_until: null });
  });

  it("appends each attempt to the history, and starts the history of a record older than it with its last attempt", async () => {
    h.sender.answer = () => HTTP_500;
    const endpoint = await h.addEndpoint();
    const process = await h.process();
    const fresh = await h.recordDelivery(endpoint, await h.logEvent());
    const earlier = { attempted_at: new Date(0), response_status: 502, error: "http_502", duration_ms: 9, request: null, response: null };
    // Written by a version that kept the last attempt alone (no history), before a replay.
    const older = await h.recordDelivery(endpoint, await h.logEvent(), { last_attempt: earlier });
    await h.database.db.collection("webhook_deliveries").updateOne({ _id: older as never }, { $unset: { attempts: "" } });
    for (let n = 1; n <= 2; n++) {
      await run(process, fresh);
      await run(process, older);
      h.clock.advance(SCHEDULE_MS[n - 1]!);
    }
    const errors = async (id: string) => (await h.record(id))!.attempts!.map((a) => a.error);
    expect(await errors(fresh)).to.deep.equal(["http_500", "http_500"]);
    expect(await errors(older)).to.deep.equal(["http_502", "http_500", "http_500"]);
    const stored = (await h.record(fresh))!;
    expect(stored.last_attempt).to.deep.equal({
      attempted_at: stored.attempts![1]!.attempted_at,
      response_status: 500,
      error: "http_500",
      duration_ms: 3,
    });
    // A claim answers the earlier attempts without their requests and responses, and leaves the stored ones whole.
    const now = h.clock.read();
    const [claimed] = await h.deliveries.claimUnleasedAttempts([fresh], now, new Date(now.getTime() + 1000));
    expect(claimed!.attempts!.map((a) => Object.keys(a).sort())).to.deep.equal(
      Array(2).fill(["attempted_at", "duration_ms", "error", "response_status"]),
    );
    expect((await h.record(fresh))!.attempts!.map((a) => Object.keys(a))).to.deep.equal(stored.attempts!.map((a) => Object.keys(a)));
  });

  it("claims many deliveries at once: each attempt to one caller of two racing claims, leased, settled and missing ones to none", async () => {
    const endpoint = await h.addEndpoint();
    const free = await Promise.all(Array.from({ length: 6 }, async () => h.recordDelivery(endpoint, await h.logEvent(), { attempt_count: 2 })));
    const now = h.clock.read();
    const leaseEnd = new Date(now.getTime() + 1000);
    const leased = await h.recordDelivery(endpoint, await h.logEvent(), { attempt_count: 2, lease_until: leaseEnd });
    const settled = await h.recordDelivery(endpoint, await h.logEvent(), { status: "succeeded", attempt_count: 1, next_attempt_at: null });
    const asked = [...free, leased, settled, "whd_missing"];
    // Two processes claiming the same deliveries at the same moment.
    const [first, second] = await Promise.all([
      h.deliveries.claimUnleasedAttempts(asked, now, leaseEnd),
      h.deliveries.claimUnleasedAttempts([...asked].reverse(), now, leaseEnd),
    ]);
    const ids = [...first!, ...second!].map((d) => d._id);
    expect([...ids].sort()).to.deep.equal([...free].sort());
    for (const claimed of [...first!, ...second!]) expect(claimed).to.deep.include({ attempt_count: 3, lease_until: leaseEnd });
    expect(await h.deliveries.claimUnleasedAttempts(asked, now, leaseEnd)).to.deep.equal([]);
    expect(await h.record(leased)).to.include({ attempt_count: 2 });
  });

  it("a job naming its endpoint and event reads them along with its claim; one naming another's reads the record's", async () => {
    const endpoint = await h.addEndpoint();
    const other = await h.addEndpoint();
    const named = await h.recordDelivery(endpoint, await h.logEvent(), { attempt_count: 1 });
    const misnamed = await h.recordDelivery(endpoint, await h.logEvent(), { attempt_count: 1 });
    const process = await h.process();
    const steps: string[] = [];
    const claim = h.deliveries.claimUnleasedAttempts.bind(h.deliveries);
    h.deliveries.claimUnleasedAttempts = async (...args) => {
      steps.push("claim sent");
      const claimed = await claim(...args);
      steps.push("claim answered");
      return claimed;
    };
    const read = h.endpoints.findManyById.bind(h.endpoints);
    h.endpoints.findManyById = (ids) => {
      steps.push(`endpoint read ${ids.join(",")}`);
      return read(ids);
    };
    const namedEvent = (await h.record(named))!.event_id;
    expect(await process.runJob(named, { endpointId: endpoint._id, eventId: namedEvent })).to.equal(undefined);
    // Both sent in the same turn, before the claim answers.
    expect(steps).to.deep.equal([`endpoint read ${endpoint._id}`, "claim sent", "claim answered"]);
    steps.length = 0;
    expect(await process.runJob(misnamed, { endpointId: other._id, eventId: namedEvent })).to.equal(undefined);
    expect(steps).to.deep.equal([`endpoint read ${other._id}`, "claim sent", "claim answered", `endpoint read ${endpoint._id}`]);
    const misnamedEvent = (await h.record(misnamed))!.event_id;
    expect(h.sender.sent.map((s) => [s.endpointId, s.eventId, s.attempt])).to.deep.equal([
      [endpoint._id, namedEvent, 2],
      [endpoint._id, misnamedEvent, 2],
    ]);
  });

  it("takes over an attempt whose lease expired (its process died), counting the lost attempt; leaves one still leased", async () => {
    const endpoint = await h.addEndpoint();
    const held = await h.logEvent();
    const lost = await h.logEvent();
    const now = h.clock.read();
    const leaseEnd = new Date(now.getTime() + 1000);
    const heldId = await h.recordDelivery(endpoint, held, { attempt_count: 3, lease_until: leaseEnd });
    const lostId = await h.recordDelivery(endpoint, lost, { attempt_count: 3, lease_until: new Date(now.getTime() - 1) });
    const process = await h.process();
    expect(await run(process, lostId)).to.equal(undefined);
    expect(h.sender.sent.map((s) => [s.eventId, s.attempt])).to.deep.equal([[lost._id, 4]]);
    expect(await h.record(lostId)).to.include({ status: "succeeded", attempt_count: 4 });
    // Still leased: the run sends nothing and looks again when the lease ends.
    expect((await run(process, heldId))!.getTime()).to.equal(leaseEnd.getTime());
    expect(await h.record(heldId)).to.include({ status: "pending", attempt_count: 3 });
    h.clock.advance(1000);
    await run(process, heldId);
    expect(h.sender.attemptsOf(held._id)).to.deep.equal([4]);
  });

  it("settles a delivery as failed when attempt 7 fails, and as failed (internal_error) when a crash cut the 7th short", async () => {
    h.sender.answer = () => HTTP_500;
    const endpoint = await h.addEndpoint();
    const event = await h.logEvent();
    const id = await h.recordDelivery(endpoint, event, { attempt_count: 6 });
    const process = await h.process();
    expect(await run(process, id)).to.equal(undefined);
    expect(h.sender.attemptsOf(event._id)).to.deep.equal([7]);
    expect(await h.record(id)).to.include({ status: "failed", attempt_count: 7, next_attempt_at: null, lease_until: null });
    expect(await run(process, id)).to.equal(undefined);
    expect(h.sender.sent).to.have.length(1);

    const crashed = await h.logEvent();
    const crashedId = await h.recordDelivery(endpoint, crashed, {
      attempt_count: 7,
      lease_until: new Date(h.clock.read().getTime() - 1000 - LEASE_MARGIN_MS),
    });
    expect(await run(process, crashedId)).to.equal(undefined);
    expect(h.sender.attemptsOf(crashed._id)).to.deep.equal([]);
    const record = (await h.record(crashedId))!;
    expect(record).to.include({ status: "failed", attempt_count: 7, next_attempt_at: null });
    expect(record.last_attempt).to.include({ error: "internal_error" });
  });

  it("ends the job of a deleted endpoint's delivery without sending", async () => {
    h.sender.answer = () => HTTP_500;
    const endpoint = await h.addEndpoint();
    const event = await h.logEvent();
    const id = await h.recordDelivery(endpoint, event);
    const process = await h.process();
    await run(process, id);
    const service = serviceOf(h, process);
    await service.deleteWebhookEndpoint(create(DeleteWebhookEndpointRequestSchema, { id: endpoint._id }), h.callerContext());
    expect(await h.recordsOf(endpoint._id)).to.deep.equal([]);
    h.clock.advance(SCHEDULE_MS[0]!);
    expect(await run(process, id)).to.equal(undefined);
    expect(h.sender.sent).to.have.length(1);
  });

  it("removes a record that a first attempt in flight writes after its endpoint was deleted, by a job one lease later", async () => {
    // Real time here: Agenda runs jobs by the wall clock.
    h.clock.realTime = true;
    const endpoint = await h.addEndpoint();
    const release = h.sender.hold();
    const process = await h.process();
    const event = await h.logEvent();
    await process.fanout.fanOut([event]);
    const deletedAt = Date.now();
    await serviceOf(h, process).deleteWebhookEndpoint(create(DeleteWebhookEndpointRequestSchema, { id: endpoint._id }), h.callerContext());
    release();
    await process.whenIdle();
    // Its outcome came after the removal: the record it held is written then.
    expect(await h.recordsOf(endpoint._id)).to.have.length(1);
    const job = await h.database.db.collection("jobs").findOne({ name: DELETED_ENDPOINT_JOB, "data.endpointId": endpoint._id });
    // One lease: the time-out (1 s) and 2 s of margin.
    expect(job!.nextRunAt.getTime() - deletedAt).to.be.within(3000, 3000 + (Date.now() - deletedAt));
    await h.queues.get(process)!.start();
    await eventually(
      () => h.recordsOf(endpoint._id),
      (records) => records.length === 0,
      8000,
    );
  });

  it("a replay writes the delivery's job due now, and its runs number the attempts from 1 again", async () => {
    h.sender.answer = () => HTTP_500;
    const endpoint = await h.addEndpoint();
    const event = await h.logEvent();
    const id = await h.recordDelivery(endpoint, event, { attempt_count: 6 });
    const first = await h.process();
    await run(first, id);
    expect(await h.record(id)).to.include({ status: "failed", attempt_count: 7 });

    const api = await h.process({ deliversInProcess: false });
    h.clock.advance(1000);
    await serviceOf(h, api).replayWebhookDelivery(create(ReplayWebhookDeliveryRequestSchema, { endpointId: endpoint._id, id }), h.callerContext());
    const replayed = (await h.record(id))!;
    expect(replayed).to.include({ status: "pending", attempt_count: 0, lease_until: null });
    expect((await h.job(id))!.nextRunAt!.getTime()).to.equal(h.clock.read().getTime());
    expect(replayed.next_attempt_at!.getTime()).to.equal(h.clock.read().getTime());

    const worker = await h.process();
    const next = await run(worker, id);
    expect(h.sender.attemptsOf(event._id)).to.deep.equal([7, 1]);
    const retried = (await h.record(id))!;
    expect(retried).to.include({ status: "pending", attempt_count: 1 });
    expect(retried.next_attempt_at!.getTime()).to.equal(next!.getTime());
    expect(next!.getTime()).to.equal(h.clock.read().getTime() + SCHEDULE_MS[0]!);
  });

  it("Agenda runs the job: retries move it along, one job per delivery, removed once the delivery succeeds", async () => {
    // Real time here: Agenda runs jobs by the wall clock.
    h.clock.realTime = true;
    let failures = 2;
    h.sender.answer = () => (failures-- > 0 ? HTTP_500 : OK);
    const endpoint = await h.addEndpoint();
    const event = await h.logEvent();
    const process = await h.process({ retryScheduleMs: [100, 100, 100, 100, 100, 100] });
    await process.fanout.fanOut([event]);
    // The first attempt was sent at once; its record is written with its outcome, and its job holds the retry.
    const [record] = await eventually(
      () => h.recordsOf(endpoint._id),
      (records) => records.length > 0,
    );
    await eventually(
      async () => ({ job: await h.job(record!._id), record: await h.record(record!._id) }),
      ({ job, record }) => record!.lease_until === null && job?.nextRunAt?.getTime() === record!.next_attempt_at?.getTime(),
    ).then(({ record }) => expect(record).to.include({ status: "pending", attempt_count: 1 }));
    await h.queues.get(process)!.start();
    await eventually(
      () => h.record(record!._id),
      (r) => r!.status === "succeeded",
      5000,
    );
    expect(h.sender.attemptsOf(event._id)).to.deep.equal([1, 2, 3]);
    await eventually(
      () => h.job(record!._id),
      (job) => job === null,
    );
  });
});

function serviceOf(h: DeliveryHarness, process: WebhookDelivery): WebhookEndpointsServiceImpl {
  return new WebhookEndpointsServiceImpl({
    endpoints: h.endpoints,
    deliveries: h.deliveries,
    events: h.events,
    clock: h.clock.read,
    send: { timeoutMs: 1000, clock: h.clock.read },
    dispatch: (id) => process.dispatch(id),
    recovery: process.recovery,
    removeDeliveriesOf: (id) => process.removeDeliveriesOf(id),
  });
}
