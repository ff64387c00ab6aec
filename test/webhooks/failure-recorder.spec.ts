// The failed attempts of one event-loop turn are written together: counted against their endpoints in one bulk write,
// each answered with its place in its endpoint's run of failures, and their outcomes recorded in one bulk write, each
// answered with whether it was recorded (not when its delivery moved on meanwhile). In process, on the embedded database.
import { expect } from "chai";
import type { AttemptOutcome } from "../../src/store/webhook-delivery-repository.ts";
import { FailureRecorder } from "../../src/webhooks/failure-recorder.ts";
import { DeliveryHarness } from "./support/in-process.ts";

describe("FailureRecorder", () => {
  let h: DeliveryHarness;
  let failures: FailureRecorder;
  beforeEach(async () => {
    h = await DeliveryHarness.start();
    failures = new FailureRecorder(h.deliveries, h.endpoints);
  });
  afterEach(() => h.close());

  it("numbers the failures of one turn in each endpoint's run of failures, in the order they came; null for an endpoint gone", async () => {
    const a = await h.addEndpoint({ consecutive_failures: 17 });
    const b = await h.addEndpoint();
    const counted = await Promise.all([
      failures.countFailure(a._id),
      failures.countFailure(b._id),
      failures.countFailure(a._id),
      failures.countFailure("gone"),
      failures.countFailure(a._id),
    ]);
    expect(counted).to.deep.equal([18, 1, 19, null, 20]);
    expect(await h.endpoints.findById(a._id)).to.include({ consecutive_failures: 20 });
    expect(await failures.countFailure(b._id)).to.equal(2);
  });

  it("records the outcomes of one turn, answering false for a delivery that moved on and writing nothing to it", async () => {
    const endpoint = await h.addEndpoint();
    const event = await h.logEvent();
    const ids = await Promise.all([
      h.recordDelivery(endpoint, event, { attempt_count: 1 }),
      h.recordDelivery(endpoint, await h.logEvent(), { attempt_count: 1 }),
      h.recordDelivery(endpoint, await h.logEvent(), { attempt_count: 1, status: "failed" }),
    ]);
    // Later than anything the harness wrote, so a record this call did not write cannot carry its time.
    const now = new Date(Date.now() + 1000);
    const outcome: AttemptOutcome = {
      status: "pending",
      next_attempt_at: new Date(now.getTime() + 60_000),
      attempt: { attempted_at: now, response_status: 503, error: "http_503", duration_ms: 5, request: null, response: null },
    };
    const recorded = await Promise.all([
      failures.record({ id: ids[0]!, attempt: 1, outcome, now }),
      failures.record({ id: ids[1]!, attempt: 2, outcome, now }),
      failures.record({ id: ids[2]!, attempt: 1, outcome, now }),
    ]);
    expect(recorded).to.deep.equal([true, false, false]);
    expect(await h.record(ids[0]!)).to.deep.include({ status: "pending", next_attempt_at: outcome.next_attempt_at, lease_until: null });
    expect((await h.record(ids[1]!))?.last_attempt).to.equal(null);
    expect(await h.record(ids[2]!)).to.include({ status: "failed" });
  });
});
