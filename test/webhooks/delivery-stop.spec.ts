// Stopping delivery with a grace period (a draining process, src/app.ts): attempts that finish within it are
// recorded as usual; an attempt still in flight when it ends is cut short, whatever the webhook time-out, and
// recorded as failed with internal_error, retried on schedule and not held against its endpoint. Nothing is lost.
// In process on the embedded database, with real HTTP to a local receiver that takes its time to answer.
import type http from "node:http";
import { expect } from "chai";
import { postWebhook } from "../../src/webhooks/delivery-client.ts";
import { InFlightAttempts } from "../../src/webhooks/in-flight-attempts.ts";
import { JobQueue } from "../../src/jobs/job-queue.ts";
import { WebhookDelivery } from "../../src/webhooks/webhook-delivery.ts";
import { DeliveryHarness, SCHEDULE_MS } from "./support/in-process.ts";
import { WebhookReceiver } from "./support/receiver.ts";

/** A webhook time-out far longer than any test: only stopping can end the attempt sooner. */
const TIMEOUT_MS = 60_000;

describe("WebhookDelivery.stop(graceMs): attempts in flight when a process stops", function () {
  this.timeout(20_000);
  let h: DeliveryHarness;
  let receiver: WebhookReceiver;
  /** Answers the receiver holds back, released after each test. */
  let held: http.ServerResponse[];
  let module: WebhookDelivery | null;
  let nextRun: Promise<Date | undefined>;

  beforeEach(async () => {
    h = await DeliveryHarness.start();
    held = [];
    receiver = await WebhookReceiver.start((_req, res) => held.push(res));
    module = null;
  });
  afterEach(async () => {
    await module?.stop();
    for (const res of held) res.end();
    await receiver.close();
    expect(h.errors).to.deep.equal([]);
    await h.close();
  });

  /** The webhooks module of one process with the real HTTP sender, and one delivery to the receiver due now. */
  async function deliveryInFlight(): Promise<{ id: string; endpointId: string }> {
    module = new WebhookDelivery(
      {
        deliveries: h.deliveries,
        endpoints: h.endpoints,
        events: h.events,
        jobs: new JobQueue(h.database.db, { pollIntervalMs: 50, lockLifetimeMs: 60_000, maxConcurrency: 4, changeStreams: false }),
        clock: h.clock.read,
        onError: (e) => h.errors.push(e),
      },
      {
        send: { timeoutMs: TIMEOUT_MS, clock: h.clock.read },
        retryScheduleMs: SCHEDULE_MS,
        maxPendingPerEndpoint: 10_000,
        concurrency: 16,
        deliversInProcess: true,
      },
    );
    const endpoint = await h.addEndpoint({ url: receiver.url() });
    const id = await h.recordDelivery(endpoint, await h.logEvent());
    // The run of its job, as Agenda starts it; what it answers is the job's next run.
    nextRun = module.runJob(id);
    await receiver.waitUntil((received) => received.length === 1);
    return { id, endpointId: endpoint._id };
  }

  it("cuts an attempt still in flight at the end of the grace period: pending, internal_error, retried on schedule", async () => {
    const { id, endpointId } = await deliveryInFlight();
    const started = performance.now();
    await module!.stop(300);
    const took = performance.now() - started;
    expect(took, "stop took the grace period, not the webhook time-out").to.be.within(250, 5000);

    const record = (await h.record(id))!;
    expect(record).to.include({ status: "pending", attempt_count: 1, lease_until: null });
    expect(record.last_attempt).to.include({ error: "internal_error", response_status: null });
    expect(record.next_attempt_at!.getTime()).to.equal(h.clock.read().getTime() + SCHEDULE_MS[0]!);
    // The job moves to the retry time, the same the record shows.
    expect((await nextRun)!.getTime()).to.equal(record.next_attempt_at!.getTime());
    // Not the receiver's failure: its count of consecutive failures is untouched.
    expect((await h.endpoints.findById(endpointId))!.consecutive_failures).to.equal(0);

    // Any process takes the retry once due, as after any failed attempt.
    const next = await h.process();
    h.clock.advance(SCHEDULE_MS[0]!);
    await next.runJob(id);
    expect(h.sender.attemptsOf(record.event_id)).to.deep.equal([2]);
    expect(await h.record(id)).to.include({ status: "succeeded", attempt_count: 2 });
  });

  it("lets an attempt that is answered within the grace period finish and records its outcome", async () => {
    const { id } = await deliveryInFlight();
    setTimeout(() => held.shift()?.end("ok"), 200);
    await module!.stop(10_000);
    expect(await h.record(id)).to.include({ status: "succeeded", attempt_count: 1, lease_until: null });
    expect(await nextRun).to.equal(undefined);
  });

  it("postWebhook: attempts cut short end as at their deadline (timeout), also one that starts afterwards", async () => {
    const stopping = new InFlightAttempts();
    const request = { url: receiver.url(), body: "{}", headers: {}, timeoutMs: TIMEOUT_MS, livemode: false, inFlight: stopping };
    const pending = postWebhook(request);
    await receiver.waitUntil((received) => received.length === 1);
    stopping.cutShort();
    expect(await pending).to.include({ error: "timeout", responseStatus: null });
    const started = performance.now();
    expect(await postWebhook(request)).to.include({ error: "timeout", responseStatus: null });
    expect(performance.now() - started).to.be.below(1000);
  });
});
