// POST /v1/webhook-endpoints/{id}/recover over REST, to a real local receiver: events of a disabled endpoint are
// recorded failed, and once it is enabled again a recovery delivers every one of them exactly once, paced: their
// jobs are due 1/rate s apart, and no attempt starts before its job's time. Then the refusals, in the order of the check order.
import { expect } from "chai";
import { expectError } from "../support/errors.ts";
import { eventually } from "../support/eventually.ts";
import type { TestService } from "../support/test-service.ts";
import { createEndpoint, createUser, sleep, startWebhookTestService } from "./support/fixtures.ts";
import { WebhookReceiver } from "./support/receiver.ts";

/** Recovered first attempts per second in this suite: fast, so 100 deliveries take under 3 s. */
const RATE = 40;

async function deliveriesOf(svc: TestService, endpointId: string): Promise<any[]> {
  const all: any[] = [];
  let after = "";
  for (;;) {
    const page = await svc.request("GET", `/v1/webhook-endpoints/${endpointId}/deliveries?limit=100${after}`);
    expect(page.status, page.text).to.equal(200);
    all.push(...page.body.data);
    if (!page.body.has_more) return all;
    after = `&starting_after=${page.body.data.at(-1).id}`;
  }
}

describe("webhook recovery", () => {
  let svc: TestService;
  let receiver: WebhookReceiver;
  before(async () => {
    // A time-out long enough that a loaded machine does not turn slow answers into retries (sent twice).
    svc = await startWebhookTestService({ env: { SVC_WEBHOOK_RECOVERY_RATE: String(RATE), SVC_WEBHOOK_TIMEOUT_MS: "10000" } });
    receiver = await WebhookReceiver.start();
  });
  after(async () => {
    await receiver.close();
    await svc.stop();
  });

  const recover = (endpointId: string, body: Record<string, unknown>, key?: string) =>
    svc.request("POST", `/v1/webhook-endpoints/${endpointId}/recover`, { body, ...(key ? { headers: { "Idempotency-Key": key } } : {}) });

  it("disable, 100 events, re-enable, recover since T: all 100 delivered exactly once, their jobs 1/rate s apart", async function () {
    this.timeout(60_000);
    const endpoint = await createEndpoint(svc, { url: receiver.url("/recovery"), event_types: ["user.created"] });
    const disabled = await svc.request("PATCH", `/v1/webhook-endpoints/${endpoint.id}`, { body: { enabled: false } });
    expect(disabled.body.enabled).to.equal(false);
    const since = new Date().toISOString();
    for (let i = 0; i < 100; i++) await createUser(svc);

    // Nothing dropped: each event is recorded for the disabled endpoint, failed, with 0 attempts; nothing sent.
    const recorded = await eventually(
      () => deliveriesOf(svc, endpoint.id),
      (list) => list.length === 100,
    );
    for (const delivery of recorded) {
      expect(delivery).to.include({ status: "failed", attempt_count: 0, next_attempt_at: null });
      expect(delivery.last_attempt).to.include({ error: "endpoint_disabled", response_status: null, duration_ms: 0 });
    }
    expect(receiver.received).to.have.length(0);

    expectError(await recover(endpoint.id, { since }), 409, "invalid_request_error", "endpoint_disabled");
    await svc.request("PATCH", `/v1/webhook-endpoints/${endpoint.id}`, { body: { enabled: true } });

    const recoveredAt = Date.now();
    const recovered = await recover(endpoint.id, { since }, "recover-100");
    expect(recovered.status, recovered.text).to.equal(200);
    expect(recovered.body).to.deep.equal({
      object: "webhook_recovery",
      endpoint_id: endpoint.id,
      since,
      until: recovered.body.until,
      deliveries_queued: 100,
    });
    expect(Date.parse(recovered.body.until)).to.be.at.least(Date.parse(since));
    // The pacing is the deliveries' jobs: one each, the k-th due k/RATE s after the first.
    const jobs = await svc.database.db
      .collection("jobs")
      .find({ name: "webhook-attempt", "data.deliveryId": { $in: recorded.map((d) => d.id) } })
      .toArray();
    // (Those already started have no next run any more.)
    const waiting = jobs.filter((j) => j.nextRunAt !== null);
    const dueOf = new Map(waiting.map((j) => [j.data.deliveryId as string, (j.nextRunAt as Date).getTime()]));
    const due = [...dueOf.values()].sort((a, b) => a - b);
    expect(due.length).to.be.at.least(50);
    // (Read while they run, so some in between may be missed: the gaps are whole multiples of 1/RATE s.)
    for (let k = 1; k < due.length; k++) {
      const gap = due[k]! - due[k - 1]!;
      expect(gap).to.be.at.least(1000 / RATE);
      expect(gap % (1000 / RATE)).to.equal(0);
    }
    // The same Idempotency-Key answers the stored recovery and queues nothing again.
    const again = await recover(endpoint.id, { since }, "recover-100");
    expect(again.headers.get("idempotent-replayed")).to.equal("true");
    expect(again.body).to.deep.equal(recovered.body);

    const eventIds = new Set(recorded.map((d) => d.event_id));
    await receiver.waitUntil((received) => received.length >= 100, 20_000);
    await sleep(300); // anything sent twice would arrive by now
    const received = receiver.received.filter((r) => eventIds.has(String(r.headers["svc-event-id"])));
    expect(received).to.have.length(100);
    expect(new Set(received.map((r) => r.headers["svc-event-id"])).size).to.equal(100);
    expect(received.every((r) => r.headers["svc-delivery-attempt"] === "1")).to.equal(true);
    const settled = await eventually(
      () => deliveriesOf(svc, endpoint.id),
      (list) => list.every((d) => d.status === "succeeded"),
    );
    expect(settled.map((d) => d.attempt_count)).to.deep.equal(Array(100).fill(1));
    // Paced: no attempt starts before its job's time, whatever process runs it (a busy machine may start one late,
    // closer to the next: the times are a floor, not a drip).
    const started = settled.map((d) => Date.parse(d.last_attempt.attempted_at));
    for (const d of settled) if (dueOf.has(d.id)) expect(Date.parse(d.last_attempt.attempted_at)).to.be.at.least(dueOf.get(d.id)!);
    // The last one is due 99/RATE s after the recovery began, and starts no sooner.
    expect(Math.max(...started)).to.be.at.least(recoveredAt + (99 / RATE) * 1000 - 50);
    const arrivals = received.map((r) => r.receivedAt);
    expect(Math.max(...arrivals)).to.be.at.least(recoveredAt + (99 / RATE) * 1000 - 50);
    // Nothing failed is left in the window: a second recovery queues nothing.
    expect((await recover(endpoint.id, { since })).body.deliveries_queued).to.equal(0);
  });

  it("refuses a malformed or out-of-range window with 422 naming the parameter, before looking the endpoint up", async () => {
    const now = Date.now();
    const day = 86_400_000;
    const unknown = "00000000-0000-4000-8000-000000000000";
    expectError(await recover(unknown, {}), 422, "invalid_request_error", "validation_error", "since");
    expectError(await recover(unknown, { since: "yesterday" }), 422, "invalid_request_error", "validation_error", "since");
    expectError(await recover(unknown, { since: new Date(now - 31 * day).toISOString() }), 422, "invalid_request_error", "validation_error", "since");
    expectError(await recover(unknown, { since: new Date(now + 60_000).toISOString() }), 422, "invalid_request_error", "validation_error", "since");
    const since = new Date(now - day).toISOString();
    expectError(await recover(unknown, { since, until: since }), 422, "invalid_request_error", "validation_error", "until");
    expectError(await recover(unknown, { since, limit: 3 }), 422, "invalid_request_error", "validation_error", "limit");
    expectError(await recover(unknown, { since }), 404, "invalid_request_error", "webhook_endpoint_not_found");
  });

  it("answers the window it used: until as given, or now", async () => {
    const endpoint = await createEndpoint(svc, { url: receiver.url("/window") });
    const since = new Date(Date.now() - 29 * 86_400_000).toISOString();
    const until = new Date(Date.now() - 86_400_000).toISOString();
    const given = await recover(endpoint.id, { since, until });
    expect(given.status, given.text).to.equal(200);
    expect(given.body).to.include({ since, until, deliveries_queued: 0 });
    const before = Date.now();
    const open = await recover(endpoint.id, { since });
    expect(Date.parse(open.body.until)).to.be.within(before - 1000, Date.now() + 1000);
  });
});
