// A disabled endpoint has no pending deliveries, whoever disabled it: by hand (PATCH enabled=false), the 20th
// failure in a row, or found disabled by the run of a delivery's job claiming an attempt. One rule settles them as failed with
// endpoint_disabled. In process, on the embedded database.
import { create } from "@bufbuild/protobuf";
import { expect } from "chai";
import { UpdateWebhookEndpointRequestSchema } from "../../gen/svc/v1/webhook_endpoints_pb.ts";
import { WebhookEndpointsServiceImpl } from "../../src/services/webhook-endpoints-service.ts";
import { CONSECUTIVE_FAILURES_TO_DISABLE } from "../../src/webhooks/delivery-policy.ts";
import { until } from "../support/eventually.ts";
import { DeliveryHarness, HTTP_500 } from "./support/in-process.ts";

describe("settling the deliveries of a disabled endpoint", () => {
  let h: DeliveryHarness;
  beforeEach(async () => {
    h = await DeliveryHarness.start();
  });
  afterEach(async () => {
    expect(h.errors).to.deep.equal([]);
    await h.close();
  });

  async function pendingDeliveries(count: number, fields = {}) {
    const endpoint = await h.addEndpoint(fields);
    const ids: string[] = [];
    for (let i = 0; i < count; i++)
      ids.push(await h.recordDelivery(endpoint, await h.logEvent(), { next_attempt_at: new Date(h.clock.read().getTime() + 60_000) }));
    return { endpoint, ids };
  }

  function expectSettled(record: any, attempts: number) {
    expect(record).to.include({ status: "failed", attempt_count: attempts, next_attempt_at: null, lease_until: null });
    expect(record.last_attempt).to.include({ error: "endpoint_disabled", response_status: null, duration_ms: 0 });
  }

  it("by hand: PATCH enabled=false settles every pending delivery", async () => {
    const { endpoint } = await pendingDeliveries(3);
    const service = new WebhookEndpointsServiceImpl({
      endpoints: h.endpoints,
      deliveries: h.deliveries,
      events: h.events,
      clock: h.clock.read,
      send: { timeoutMs: 1000, clock: h.clock.read },
      dispatch: async () => {},
      recovery: (await h.process()).recovery,
      removeDeliveriesOf: (id) => h.deliveries.deleteForEndpoint(id).then(() => undefined),
    });
    await service.updateWebhookEndpoint(
      create(UpdateWebhookEndpointRequestSchema, { id: endpoint._id, endpoint: { enabled: false }, updateMask: { paths: ["enabled"] } }),
      h.callerContext(),
    );
    for (const record of await h.recordsOf(endpoint._id)) expectSettled(record, 0);
  });

  it("found disabled by a worker: the claimed attempt is given back and not sent; the others settle too", async () => {
    const { endpoint, ids } = await pendingDeliveries(2, { enabled: false, disabled_reason: "manual" });
    const dueId = await h.recordDelivery(endpoint, await h.logEvent(), { attempt_count: 2 });
    const process = await h.process();
    expect(await process.runJob(dueId)).to.equal(undefined);
    expect(h.sender.sent).to.deep.equal([]);
    expectSettled(await h.record(dueId), 2);
    for (const id of ids) expectSettled(await h.record(id), 0);
  });

  it(`automatically: the ${CONSECUTIVE_FAILURES_TO_DISABLE}th failure in a row disables the endpoint and settles the rest`, async () => {
    h.sender.answer = () => HTTP_500;
    const { endpoint, ids } = await pendingDeliveries(2, { consecutive_failures: CONSECUTIVE_FAILURES_TO_DISABLE - 1 });
    const failing = await h.recordDelivery(endpoint, await h.logEvent());
    const process = await h.process();
    expect(await process.runJob(failing)).to.equal(undefined);
    const stored = await h.endpoints.findById(endpoint._id);
    expect(stored).to.include({ enabled: false, disabled_reason: "consecutive_failures" });
    for (const id of [failing, ...ids]) expectSettled(await h.record(id), id === failing ? 1 : 0);
  });

  it("a success ends the run of failures counted while it was in flight, so alternating outcomes never disable", async () => {
    const endpoint = await h.addEndpoint();
    const delivery = await h.recordDelivery(endpoint, await h.logEvent());
    const open = h.sender.hold();
    const process = await h.process();
    const run = process.runJob(delivery);
    await until(async () => h.sender.sent.length === 1, 5000);
    // Other deliveries' failures counted while this attempt (which read the endpoint without failures) is in flight.
    await h.endpoints.recordFailures(new Map([[endpoint._id, CONSECUTIVE_FAILURES_TO_DISABLE - 1]]));
    open();
    await run;
    expect(await h.record(delivery)).to.include({ status: "succeeded" });
    expect(await h.endpoints.findById(endpoint._id)).to.include({ enabled: true, consecutive_failures: 0 });
  });
});
