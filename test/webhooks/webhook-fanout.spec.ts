// Fan-out: one delivery record per (event, matching endpoint), written once however often it runs; in a delivering
// process the first attempts run at once, their records held until their outcomes (then written once, finished),
// behind one guarantee job per batch a lease later; a relay that runs again records what is missing without sending
// it at once; left unclaimed, their jobs due now, for workers in an API process; past the pending limit, recorded as
// failed with queue_full. In process, on the embedded database.
import { expect } from "chai";
import { eventually } from "../support/eventually.ts";
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
    await process.whenIdle();
    const records = [...(await h.recordsOf(all._id)), ...(await h.recordsOf(kycOnly._id))];
    expect(records.map((r) => [r.endpoint_id, r.event_id]).sort()).to.deep.equal(
      [
        [all._id, created._id],
        [all._id, approved._id],
        [kycOnly._id, approved._id],
      ].sort(),
    );
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
    const relayedBefore = new Set(events.map((e) => e._id));
    await process.fanout.fanOut(events, relayedBefore);
    await (await h.process()).fanout.fanOut(events, relayedBefore); // another process's relay, too
    await process.whenIdle();
    expect(await h.recordsOf(endpoint._id)).to.deep.equal(first);
    expect(h.sender.sent).to.have.length(2);
    expect(await h.jobCount()).to.equal(0);
  });

  it("holds a first attempt's record until its outcome, then writes it once, finished", async () => {
    const endpoint = await h.addEndpoint();
    const release = h.sender.hold();
    const process = await h.process();
    const event = await h.logEvent();
    const now = h.clock.read();
    await process.fanout.fanOut([event]);
    expect(h.sender.attemptsOf(event._id)).to.deep.equal([1]);
    expect(await h.recordsOf(endpoint._id)).to.deep.equal([]);
    release();
    await process.whenIdle();
    const [record, ...others] = await h.recordsOf(endpoint._id);
    expect(others).to.deep.equal([]);
    expect(record).to.include({ event_id: event._id, status: "succeeded", attempt_count: 1, next_attempt_at: null, lease_until: null });
    expect(record!.created_at.getTime()).to.equal(now.getTime());
    expect(record!.attempts!.map((a) => a.response_status)).to.deep.equal([200]);
    expect(record!.last_attempt).to.deep.equal({
      attempted_at: now,
      response_status: 200,
      error: null,
      duration_ms: record!.attempts![0]!.duration_ms,
    });
  });

  it("writes a record still waiting for its outcome after the visibility window pending, its attempt claimed; the outcome then updates it", async () => {
    const endpoint = await h.addEndpoint();
    const release = h.sender.hold();
    const process = await h.process({ heldRecordsVisibleWithinMs: 20 });
    const event = await h.logEvent();
    const now = h.clock.read();
    await process.fanout.fanOut([event]);
    const [pending] = await eventually(
      () => h.recordsOf(endpoint._id),
      (records) => records.length > 0,
    );
    expect(pending).to.include({ status: "pending", attempt_count: 1 });
    expect(pending!.lease_until!.getTime()).to.be.above(now.getTime());
    release();
    await process.whenIdle();
    expect(await h.record(pending!._id)).to.include({ status: "succeeded", attempt_count: 1, lease_until: null });
    expect(await h.recordsOf(endpoint._id)).to.have.length(1);
    expect(await h.firstAttemptJobs()).to.deep.equal([]);
  });

  it("a relay that runs again while first attempts are in flight records them unclaimed, their jobs a lease later, and sends nothing at once", async () => {
    const endpoint = await h.addEndpoint();
    const release = h.sender.hold();
    const relaying = await h.process();
    const event = await h.logEvent();
    await relaying.fanout.fanOut([event]);
    // Another relay of the same event (the user's outbox relayed twice at once), in another process.
    const other = await h.process();
    const now = h.clock.read();
    await other.fanout.fanOut([event], new Set([event._id]));
    const [record, ...others] = await h.recordsOf(endpoint._id);
    expect(others).to.deep.equal([]);
    expect(record).to.include({ status: "pending", attempt_count: 0, lease_until: null });
    // Due once the first relay's attempt is over, whatever it was: a first attempt's lease (time-out 1 s, lease 3 s).
    expect((await h.job(record!._id))!.nextRunAt!.getTime()).to.equal(now.getTime() + 4000);
    expect(h.sender.attemptsOf(event._id)).to.deep.equal([1]);
    release();
    await relaying.whenIdle();
    // The first relay's outcome finds its delivery recorded by the other: it is not written over it.
    expect(await h.recordsOf(endpoint._id)).to.deep.equal([record]);
    expect(await h.firstAttemptJobs()).to.deep.equal([]);
    h.clock.advance(4000);
    expect(await other.runJob(record!._id)).to.equal(undefined);
    expect(await h.record(record!._id)).to.include({ status: "succeeded", attempt_count: 1 });
    expect(h.sender.attemptsOf(event._id)).to.deep.equal([1, 1]);
  });

  it("a relay that runs again in the process holding a first attempt's record leaves it be: written once, with its outcome", async () => {
    const endpoint = await h.addEndpoint();
    const release = h.sender.hold();
    const process = await h.process();
    const event = await h.logEvent();
    await process.fanout.fanOut([event]);
    // The user's outbox relayed again by a later write of the user, in the same process.
    await process.fanout.fanOut([event], new Set([event._id]));
    expect(await h.recordsOf(endpoint._id)).to.deep.equal([]);
    expect(await h.jobCount()).to.equal(1);
    release();
    await process.whenIdle();
    const [record, ...others] = await h.recordsOf(endpoint._id);
    expect(others).to.deep.equal([]);
    expect(record).to.include({ status: "succeeded", attempt_count: 1 });
    expect(h.sender.attemptsOf(event._id)).to.deep.equal([1]);
    expect(await h.jobCount()).to.equal(0);
  });

  it("a relay that runs again gives an endpoint none of the events from before it existed", async () => {
    const process = await h.process();
    const event = await h.logEvent();
    h.clock.advance(1000);
    const later = await h.addEndpoint();
    await process.fanout.fanOut([event], new Set([event._id]));
    await process.whenIdle();
    expect(await h.recordsOf(later._id)).to.deep.equal([]);
    expect(h.sender.sent).to.deep.equal([]);
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
    // Hold the attempts in flight: the guarantee job is there, a lease later.
    const release = h.sender.hold();
    const process = await h.process();
    const events = [await h.logEvent(), await h.logEvent()];
    const now = h.clock.read();
    await process.fanout.fanOut(events);
    const [guarantee, ...others] = await h.firstAttemptJobs();
    expect(others).to.deep.equal([]);
    // A first attempt's lease: time-out (1 s) and the lease of an attempt (time-out and 2 s of margin).
    expect(guarantee!.nextRunAt!.getTime()).to.equal(now.getTime() + 4000);
    expect(guarantee!.data.eventIds.sort()).to.deep.equal(events.map((e) => e._id).sort());
    // No job per delivery while its first attempt is in flight: the batch's job stands behind all four.
    expect(await h.jobCount()).to.equal(1);
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
    const release = h.sender.hold();
    // The process that relays the event holds its first attempt past the lease, as one that died would.
    const relaying = await h.process();
    const event = await h.logEvent();
    await relaying.fanout.fanOut([event]);
    const [guarantee] = await h.firstAttemptJobs();
    h.clock.advance(guarantee!.nextRunAt!.getTime() - h.clock.read().getTime());
    h.sender.gate = null;
    const other = await h.process();
    await other.runFirstAttemptsGuarantee(guarantee!.data);
    // The record the relaying process held is written as it held it, its attempt claimed, the lease over.
    const [record, ...others] = await h.recordsOf(endpoint._id);
    expect(others).to.deep.equal([]);
    expect(record).to.include({ status: "pending", attempt_count: 1 });
    expect(record!.lease_until!.getTime()).to.equal(guarantee!.nextRunAt!.getTime());
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
