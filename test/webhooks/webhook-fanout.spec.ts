// Fan-out: one delivery record per (event, matching endpoint), inserted once however often it runs; the
// first attempts claimed at insertion and run at once in a delivering process, each with its job a lease later as
// the guarantee; left unclaimed, their jobs due now, for workers in an API process; past the pending limit, recorded as failed with queue_full. In process, on the embedded database.
import { expect } from "chai";
import { DeliveryHarness } from "./support/in-process.ts";

describe("WebhookFanout", () => {
  let h: DeliveryHarness;
  beforeEach(async () => {
    h = await DeliveryHarness.start();
  });
  afterEach(async () => {
    expect(h.errors).to.deep.equal([]);
    await h.close();
  });

  it("records one delivery per event and matching endpoint, claims its first attempt and runs it at once", async () => {
    const all = await h.addEndpoint();
    const kycOnly = await h.addEndpoint({ event_types: ["kyc.approved"] });
    const process = await h.process();
    const created = await h.logEvent("user.created");
    const approved = await h.logEvent("kyc.approved");
    const now = h.clock.read();
    await process.fanout.fanOut([created, approved]);
    const records = [...(await h.recordsOf(all._id)), ...(await h.recordsOf(kycOnly._id))];
    expect(records.map((r) => [r.endpoint_id, r.event_id]).sort()).to.deep.equal(
      [
        [all._id, created._id],
        [all._id, approved._id],
        [kycOnly._id, approved._id],
      ].sort(),
    );
    await process.whenIdle();
    expect(h.sender.sent.map((s) => [s.endpointId, s.eventId, s.attempt]).sort()).to.deep.equal(
      [
        [all._id, created._id, 1],
        [all._id, approved._id, 1],
        [kycOnly._id, approved._id, 1],
      ].sort(),
    );
    for (const record of await h.recordsOf(all._id)) {
      expect(record).to.include({ status: "succeeded", attempt_count: 1, next_attempt_at: null, lease_until: null });
      expect(record.created_at.getTime()).to.equal(now.getTime());
      // Its guarantee job went with the recorded outcome.
      expect(await h.job(record._id)).to.equal(null);
    }
  });

  it("creates nothing twice when it runs again for the same events, and sends nothing again", async () => {
    const endpoint = await h.addEndpoint();
    const process = await h.process();
    const events = [await h.logEvent(), await h.logEvent()];
    await process.fanout.fanOut(events);
    await process.whenIdle();
    const first = await h.recordsOf(endpoint._id);
    await process.fanout.fanOut(events);
    await (await h.process()).fanout.fanOut(events); // another process's relay, too
    await process.whenIdle();
    expect(await h.recordsOf(endpoint._id)).to.deep.equal(first);
    expect(h.sender.sent).to.have.length(2);
  });

  it("records events past the pending limit as failed with queue_full and 0 attempts", async () => {
    h.sender.answer = () => ({ responseStatus: 500, error: "http_500", durationMs: 1 });
    const endpoint = await h.addEndpoint();
    const process = await h.process({ maxPendingPerEndpoint: 2 });
    const events = [await h.logEvent(), await h.logEvent(), await h.logEvent()];
    await process.fanout.fanOut(events);
    await process.whenIdle();
    const records = await h.recordsOf(endpoint._id);
    expect(records.filter((r) => r.status === "pending")).to.have.length(2);
    const full = records.filter((r) => r.status === "failed");
    expect(full).to.have.length(1);
    expect(full[0]).to.include({ attempt_count: 0, next_attempt_at: null, lease_until: null });
    expect(full[0]!.last_attempt).to.include({ error: "queue_full", response_status: null, duration_ms: 0 });
    expect(h.sender.sent).to.have.length(2);
    expect(h.sender.attemptsOf(full[0]!.event_id)).to.deep.equal([]);
  });

  it("records nothing for other projects or environments, unsubscribed types, or test events", async () => {
    const live = await h.addEndpoint({ livemode: true });
    const otherProject = await h.addEndpoint({ project_id: "another-project" });
    const kycOnly = await h.addEndpoint({ event_types: ["kyc.approved"] });
    const process = await h.process();
    await process.fanout.fanOut([await h.logEvent("user.created"), await h.logEvent("webhook.test")]);
    await process.whenIdle();
    for (const endpoint of [live, otherProject, kycOnly]) expect(await h.recordsOf(endpoint._id)).to.deep.equal([]);
    expect(h.sender.sent).to.deep.equal([]);
  });

  it("records each subscribed event of a disabled endpoint as failed with endpoint_disabled and 0 attempts, sending nothing", async () => {
    const disabled = await h.addEndpoint({ enabled: false, disabled_reason: "manual", event_types: ["user.created"] });
    const process = await h.process();
    const created = await h.logEvent("user.created");
    await process.fanout.fanOut([created, await h.logEvent("kyc.approved")]);
    await process.whenIdle();
    const records = await h.recordsOf(disabled._id);
    expect(records.map((r) => r.event_id)).to.deep.equal([created._id]);
    expect(records[0]).to.include({ status: "failed", attempt_count: 0, next_attempt_at: null, lease_until: null });
    expect(records[0]!.last_attempt).to.include({ error: "endpoint_disabled", response_status: null, duration_ms: 0 });
    expect(h.sender.sent).to.deep.equal([]);
    // A disabled endpoint's failed records take no room from its pending limit.
    expect(await h.deliveries.countPending(disabled._id, 10)).to.equal(0);
  });

  it("writes one job for a batch's first attempts, a lease later, as their guarantee; a failed one gets its delivery's job at the retry time; the batch's job goes once all are recorded", async () => {
    const failing = await h.addEndpoint();
    const healthy = await h.addEndpoint();
    h.sender.answer = (sent) =>
      sent.endpointId === failing._id
        ? { responseStatus: 500, error: "http_500", durationMs: 1 }
        : { responseStatus: 200, error: null, durationMs: 1 };
    let release = () => {};
    // Hold the attempts in flight: the guarantee job is there, a lease later.
    h.sender.gate = new Promise<void>((resolve) => (release = resolve));
    const process = await h.process();
    const events = [await h.logEvent(), await h.logEvent()];
    const now = h.clock.read();
    await process.fanout.fanOut(events);
    const [record] = await h.recordsOf(failing._id);
    expect(record).to.include({ status: "pending", attempt_count: 1 });
    expect(record!.lease_until!.getTime()).to.be.above(now.getTime());
    const [guarantee, ...others] = await h.firstAttemptJobs();
    expect(others).to.deep.equal([]);
    expect(guarantee!.nextRunAt!.getTime()).to.equal(record!.lease_until!.getTime());
    expect(guarantee!.data.eventIds.sort()).to.deep.equal(events.map((e) => e._id).sort());
    // No job per delivery while its first attempt is in flight: the batch's job stands behind all four.
    for (const d of [...(await h.recordsOf(failing._id)), ...(await h.recordsOf(healthy._id))]) expect(await h.job(d._id)).to.equal(null);
    release();
    await process.whenIdle();
    for (const failed of await h.recordsOf(failing._id)) {
      expect(failed).to.include({ status: "pending", attempt_count: 1, lease_until: null });
      expect((await h.job(failed._id))!.nextRunAt!.getTime()).to.equal(failed.next_attempt_at!.getTime());
    }
    for (const succeeded of await h.recordsOf(healthy._id)) {
      expect(succeeded).to.include({ status: "succeeded" });
      expect(await h.job(succeeded._id)).to.equal(null);
    }
    expect(await h.firstAttemptJobs()).to.deep.equal([]);
  });

  it("keeps the batch's job while a first attempt is unrecorded; its run gives each pending delivery its job, and the lost attempt is followed once", async () => {
    const endpoint = await h.addEndpoint();
    let release = () => {};
    h.sender.gate = new Promise<void>((resolve) => (release = resolve));
    // The process that relays the event holds its first attempt past the lease, as one that died would.
    const relaying = await h.process();
    const event = await h.logEvent();
    await relaying.fanout.fanOut([event]);
    const [record] = await h.recordsOf(endpoint._id);
    const [guarantee] = await h.firstAttemptJobs();
    h.clock.advance(guarantee!.nextRunAt!.getTime() - h.clock.read().getTime());
    h.sender.gate = null;
    const other = await h.process();
    await other.runFirstAttemptsGuarantee(guarantee!.data);
    expect((await h.job(record!._id))!.nextRunAt!.getTime()).to.equal(record!.lease_until!.getTime());
    // The delivery's job runs: attempt 1 counts as lost, attempt 2 is sent and recorded.
    expect(await other.runJob(record!._id)).to.equal(undefined);
    expect(await h.record(record!._id)).to.include({ status: "succeeded", attempt_count: 2 });
    release();
    await relaying.whenIdle();
    // The late answer to attempt 1 changes nothing recorded.
    expect(await h.record(record!._id)).to.include({ status: "succeeded", attempt_count: 2 });
    expect(h.sender.attemptsOf(event._id)).to.deep.equal([1, 2]);
    // The batch's job went once its attempt was done; the delivery's job, run by hand here, is all that is left. A
    // run of the batch's job once its deliveries are settled adds nothing.
    expect(await h.firstAttemptJobs()).to.deep.equal([]);
    await other.runFirstAttemptsGuarantee(guarantee!.data);
    expect(await h.jobCount()).to.equal(1);
  });

  it("leaves the records of an API process unclaimed, their jobs due now, for the workers", async () => {
    const endpoint = await h.addEndpoint();
    const api = await h.process({ deliversInProcess: false });
    const event = await h.logEvent();
    const now = h.clock.read();
    await api.fanout.fanOut([event]);
    await api.whenIdle();
    const [record] = await h.recordsOf(endpoint._id);
    expect(record).to.include({ status: "pending", attempt_count: 0, lease_until: null });
    expect(record!.next_attempt_at!.getTime()).to.equal(now.getTime());
    expect((await h.job(record!._id))!.nextRunAt!.getTime()).to.equal(now.getTime());
    expect(h.sender.sent).to.deep.equal([]);

    const worker = await h.process();
    expect(await worker.runJob(record!._id)).to.equal(undefined);
    expect(h.sender.attemptsOf(event._id)).to.deep.equal([1]);
    expect((await h.recordsOf(endpoint._id))[0]).to.include({ status: "succeeded", attempt_count: 1 });
  });
});
