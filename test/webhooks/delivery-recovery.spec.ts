// Recovery in process: which deliveries a recovery restarts (failed, of the endpoint, created in the window,
// oldest first, up to the pending limit), the fresh cycle it starts (as replay does), and the pacing written into
// the deliveries' jobs (each record showing the same time), two recoveries of one endpoint following each other.
// On the embedded database.
import { expect } from "chai";
import { recoverySpacingMs } from "../../src/webhooks/delivery-policy.ts";
import { eventually } from "../support/eventually.ts";
import { DeliveryHarness } from "./support/in-process.ts";

describe("DeliveryRecovery", () => {
  let h: DeliveryHarness;
  beforeEach(async () => {
    h = await DeliveryHarness.start();
  });
  afterEach(async () => {
    expect(h.errors).to.deep.equal([]);
    await h.close();
  });

  const failed = (error = "http_500") => ({
    status: "failed" as const,
    attempt_count: 7,
    next_attempt_at: null,
    last_attempt: { attempted_at: new Date(0), response_status: 500, error, duration_ms: 4 },
  });

  it("restarts the endpoint's failed deliveries created in [since, until), oldest first, paced at the rate", async () => {
    const endpoint = await h.addEndpoint();
    const other = await h.addEndpoint();
    const t0 = h.clock.read();
    const at = (ms: number) => new Date(t0.getTime() + ms);
    const before = await h.recordDelivery(endpoint, await h.logEvent(), { ...failed(), created_at: at(-1) });
    const inWindow: string[] = [];
    for (let i = 0; i < 3; i++)
      inWindow.push(await h.recordDelivery(endpoint, await h.logEvent(), { ...failed("endpoint_disabled"), created_at: at(10 * (3 - i)) }));
    const succeeded = await h.recordDelivery(endpoint, await h.logEvent(), { status: "succeeded", next_attempt_at: null, created_at: at(5) });
    const atUntil = await h.recordDelivery(endpoint, await h.logEvent(), { ...failed(), created_at: at(100) });
    const otherEndpoint = await h.recordDelivery(other, await h.logEvent(), { ...failed(), created_at: at(5) });
    const process = await h.process({ recoveryRatePerSecond: 4, deliversInProcess: false });
    h.clock.advance(1000);
    const now = h.clock.read();

    expect(await process.recovery.recover(endpoint._id, { since: t0, until: at(100) })).to.equal(3);

    // Oldest first: the last one recorded above was created first.
    const oldestFirst = [...inWindow].reverse();
    for (const [k, id] of oldestFirst.entries()) {
      const record = (await h.record(id))!;
      expect(record).to.include({ status: "pending", attempt_count: 0, lease_until: null });
      // The previous cycle's last attempt stays until the new one is made.
      expect(record.last_attempt).to.include({ error: "endpoint_disabled" });
      expect(record.next_attempt_at!.getTime()).to.equal(now.getTime() + Math.ceil(k * recoverySpacingMs(4)));
      expect((await h.job(id))!.nextRunAt!.getTime()).to.equal(record.next_attempt_at!.getTime());
    }
    for (const id of [before, atUntil, otherEndpoint]) expect((await h.record(id))!.status).to.equal("failed");
    expect((await h.record(succeeded))!.status).to.equal("succeeded");
    // Pending now: a second recovery of the same window finds nothing to do.
    expect(await process.recovery.recover(endpoint._id, { since: t0, until: at(100) })).to.equal(0);
  });

  it("paces a second recovery of the endpoint after the first, not beside it", async () => {
    const endpoint = await h.addEndpoint();
    const t0 = h.clock.read();
    const first = [await h.recordDelivery(endpoint, await h.logEvent(), failed()), await h.recordDelivery(endpoint, await h.logEvent(), failed())];
    h.clock.advance(10);
    const second = await h.recordDelivery(endpoint, await h.logEvent(), failed());
    const process = await h.process({ recoveryRatePerSecond: 2, deliversInProcess: false });
    const now = h.clock.read();
    const spacing = recoverySpacingMs(2);
    expect(await process.recovery.recover(endpoint._id, { since: t0, until: new Date(t0.getTime() + 5) })).to.equal(2);
    expect(await process.recovery.recover(endpoint._id, { since: t0, until: new Date(t0.getTime() + 20) })).to.equal(1);
    const due = async (id: string) => (await h.job(id))!.nextRunAt!.getTime() - now.getTime();
    expect([await due(first[0]!), await due(first[1]!)].sort((a, b) => a - b)).to.deep.equal([0, Math.ceil(spacing)]);
    expect(await due(second)).to.equal(Math.ceil(2 * spacing));
  });

  it("queues no more than the room left under the pending limit; the rest stay failed for a later recovery", async () => {
    const endpoint = await h.addEndpoint();
    const t0 = h.clock.read();
    await h.recordDelivery(endpoint, await h.logEvent()); // pending: takes one place
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push(await h.recordDelivery(endpoint, await h.logEvent(), { ...failed(), created_at: new Date(t0.getTime() + i) }));
    const process = await h.process({ maxPendingPerEndpoint: 3, deliversInProcess: false });
    expect(await process.recovery.recover(endpoint._id, { since: t0, until: new Date(t0.getTime() + 10) })).to.equal(2);
    expect(await Promise.all(ids.map(async (id) => (await h.record(id))!.status))).to.deep.equal(["pending", "pending", "failed", "failed"]);
  });

  it("runs the recovered attempts as their jobs fall due, paced, numbered from 1", async () => {
    // Real time here: Agenda runs jobs by the wall clock.
    h.clock.realTime = true;
    const endpoint = await h.addEndpoint();
    const t0 = new Date(Date.now() - 1000);
    const events = [await h.logEvent(), await h.logEvent(), await h.logEvent()];
    for (const [i, event] of events.entries()) await h.recordDelivery(endpoint, event, { ...failed(), created_at: new Date(t0.getTime() + i) });
    const process = await h.process({ recoveryRatePerSecond: 10 });
    await h.queues.get(process)!.start();
    const started = Date.now();
    expect(await process.recovery.recover(endpoint._id, { since: t0, until: new Date() })).to.equal(3);
    await eventually(
      async () => h.sender.sent.length,
      (n) => n === 3,
      5000,
    );
    const took = Date.now() - started;
    expect(took, "the third starts 2/rate s after the first").to.be.at.least(190);
    for (const event of events) expect(h.sender.attemptsOf(event._id)).to.deep.equal([1]);
    // Each outcome is written once its attempt is answered: a moment after the receiver has it.
    const records = await eventually(
      () => h.recordsOf(endpoint._id),
      (all) => all.every((record) => record.status === "succeeded"),
      5000,
    );
    for (const record of records) expect(record).to.include({ status: "succeeded", attempt_count: 1 });
  });
});
