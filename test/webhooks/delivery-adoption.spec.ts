// A pending delivery without a job (left by a version that kept no delivery jobs, or whose job was lost) gets its
// job when a process starts, due at its recorded next attempt, and is delivered; a delivery that has its job keeps
// it as it is.
import { expect } from "chai";
import { MongoClient } from "mongodb";
import { uniquePhone } from "../support/phones.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { WebhookReceiver } from "./support/receiver.ts";

describe("pending deliveries adopted at start", function () {
  this.timeout(30_000);
  let first: TestService | null = null;
  let second: TestService | null = null;
  let receiver: WebhookReceiver;
  before(async () => {
    receiver = await WebhookReceiver.start();
  });
  after(async () => {
    await first?.stop();
    await second?.stop();
    await receiver.close();
  });

  it("gives a pending delivery without a job its job at start, and delivers it once", async () => {
    first = await startTestService();
    const endpoint = await first.request("POST", "/v1/webhook-endpoints", { body: { url: receiver.url("/adopt"), event_types: ["user.created"] } });
    expect(endpoint.status).to.equal(201);
    const created = await first.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
    const listed = await first.request("GET", "/v1/events?type=user.created&limit=1");
    expect(listed.status, JSON.stringify(listed.body)).to.equal(200);
    const event = listed.body.data[0];
    expect(event.data.object.id).to.equal(created.body.id);
    await receiver.waitUntil(() => receiver.forEvent(event.id).length === 1);
    const uri = first.databaseUri;
    await first.stop();
    first = null;

    // As a version without delivery jobs would leave it: pending, due now, no job.
    const client = await MongoClient.connect(uri);
    try {
      const deliveries = client.db().collection("webhook_deliveries");
      const delivery = await deliveries.findOne({ event_id: event.id });
      await deliveries.updateOne(
        { _id: delivery!._id },
        { $set: { status: "pending", next_attempt_at: new Date(), attempt_count: 1, lease_until: null } },
      );
      await client.db().collection("jobs").deleteMany({ "data.deliveryId": delivery!._id });
    } finally {
      await client.close();
    }

    second = await startTestService({ databaseUri: uri });
    await receiver.waitUntil(() => receiver.forEvent(event.id).length === 2, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.forEvent(event.id)).to.have.length(2);
    const delivery = await second.database.db.collection("webhook_deliveries").findOne({ event_id: event.id });
    expect(delivery).to.include({ status: "succeeded", attempt_count: 2 });
  });
});
