// Fan-out's records of first attempts, held until their outcomes: released once each for the insert of the finished
// record; written pending, as fan-out built them, once the visibility window passes; never written after a stop.
import { expect } from "chai";
import type { Database } from "../../src/store/database.ts";
import { type WebhookDeliveryDocument, WebhookDeliveryRepository } from "../../src/store/webhook-delivery-repository.ts";
import { HeldRecords } from "../../src/webhooks/held-records.ts";
import { deliveryRecord } from "../../src/webhooks/webhook-fanout.ts";
import { eventually } from "../support/eventually.ts";
import { freshDatabase } from "../support/database.ts";

const NOW = new Date(Date.UTC(2026, 10, 28, 12));

function claimed(eventId: string): WebhookDeliveryDocument {
  return deliveryRecord(
    { _id: "we_held" },
    { _id: eventId, project_id: "proj_held", livemode: false, type: "user.created" },
    NOW,
    new Date(NOW.getTime() + 30_000),
  );
}

describe("HeldRecords", () => {
  let database: Database;
  let deliveries: WebhookDeliveryRepository;
  const errors: unknown[] = [];
  beforeEach(async () => {
    database = await freshDatabase("svc_held_records");
    deliveries = new WebhookDeliveryRepository(database.db);
    await deliveries.ensureIndexes();
    errors.length = 0;
  });
  afterEach(async () => {
    expect(errors).to.deep.equal([]);
    await database.close();
  });

  const stored = () => database.db.collection<WebhookDeliveryDocument>("webhook_deliveries").find({}).sort({ event_id: 1 }).toArray();

  it("releases each held record once, for its outcome's insert, and nothing it never held", async () => {
    const held = new HeldRecords(deliveries, (e) => errors.push(e), 60_000);
    const [a, b] = [claimed("evt_a"), claimed("evt_b")];
    held.hold([a, b]);
    expect(held.holds("evt_a")).to.equal(true);
    expect(held.holds("evt_other")).to.equal(false);
    expect(await held.release(a._id)).to.equal(a);
    // Still held while its insert is under way.
    expect(held.holds("evt_a")).to.equal(true);
    held.written(a);
    expect(held.holds("evt_a")).to.equal(false);
    expect(await held.release(a._id)).to.equal(null);
    expect(await held.release("whd_unknown")).to.equal(null);
    expect(await held.release(b._id)).to.equal(b);
    expect(await stored()).to.deep.equal([]);
  });

  it("writes the records still held after the window pending, as fan-out built them; their outcomes are then updates", async () => {
    const held = new HeldRecords(deliveries, (e) => errors.push(e), 20);
    const [a, b] = [claimed("evt_a"), claimed("evt_b")];
    held.hold([a, b]);
    expect(await held.release(a._id)).to.equal(a);
    await eventually(stored, (records) => records.length > 0);
    expect(await stored()).to.deep.equal([b]);
    expect(held.holds("evt_b")).to.equal(false);
    expect(await held.release(b._id)).to.equal(null);
    held.stop();
  });

  it("an outcome that comes while the window's write is under way waits for it, then is an update", async () => {
    const held = new HeldRecords(deliveries, (e) => errors.push(e), 1);
    const record = claimed("evt_a");
    held.hold([record]);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await held.release(record._id)).to.equal(null);
    expect(await stored()).to.deep.equal([record]);
  });

  it("writes nothing once stopped: records still held are left to their batches' guarantee jobs", async () => {
    const held = new HeldRecords(deliveries, (e) => errors.push(e), 20);
    held.hold([claimed("evt_a")]);
    held.stop();
    expect(held.holds("evt_a")).to.equal(false);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await stored()).to.deep.equal([]);
  });
});
