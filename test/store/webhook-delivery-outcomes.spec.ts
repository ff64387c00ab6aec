// An outcome is written into a delivery's record either as an update of the record fan-out wrote, or, for a first
// attempt whose record fan-out held, as one insert of the finished record: both leave the same document, field for
// field and in the same order, and a held record never replaces one already there for its event and endpoint.
import { expect } from "chai";
import type { Database } from "../../src/store/database.ts";
import { type AttemptOutcome, type WebhookDeliveryDocument, WebhookDeliveryRepository } from "../../src/store/webhook-delivery-repository.ts";
import { deliveryRecord } from "../../src/webhooks/webhook-fanout.ts";
import { freshDatabase } from "../support/database.ts";

const NOW = new Date(Date.UTC(2026, 10, 28, 12));
const LATER = new Date(NOW.getTime() + 5);

function claimed(endpointId: string, eventId: string): WebhookDeliveryDocument {
  return deliveryRecord(
    { _id: endpointId },
    { _id: eventId, project_id: "proj_outcomes", livemode: false, type: "user.created" },
    NOW,
    new Date(NOW.getTime() + 30_000),
  );
}

function outcome(status: "succeeded" | "pending"): AttemptOutcome {
  return {
    status,
    next_attempt_at: status === "pending" ? new Date(NOW.getTime() + 60_000) : null,
    attempt: {
      attempted_at: NOW,
      response_status: status === "pending" ? 503 : 200,
      error: status === "pending" ? "http_503" : null,
      duration_ms: 4,
      request: { url: "https://receiver.example.com/hooks", headers: "content-type: application/json\n", body: "{}", body_truncated: false },
      response: { headers: "content-length: 0\n", body: "", body_truncated: false },
    },
  };
}

describe("webhook delivery outcomes", () => {
  let database: Database;
  let repository: WebhookDeliveryRepository;
  beforeEach(async () => {
    database = await freshDatabase("svc_delivery_outcomes");
    repository = new WebhookDeliveryRepository(database.db);
    await repository.ensureIndexes();
  });
  afterEach(() => database.close());

  const raw = (id: string) => database.db.collection<WebhookDeliveryDocument>("webhook_deliveries").findOne({ _id: id });

  for (const status of ["succeeded", "pending"] as const) {
    it(`writes a held record with its outcome (${status}) as the document an insert and that outcome's update leave`, async () => {
      const updated = claimed("we_a", "evt_updated");
      await repository.insertManyOnce([updated]);
      const held = claimed("we_a", "evt_held");
      const written = await repository.recordAttemptsEach([
        { id: updated._id, attempt: 1, outcome: outcome(status), now: LATER },
        { id: held._id, attempt: 1, outcome: outcome(status), now: LATER, held },
      ]);
      expect(written).to.deep.equal([true, true]);
      const viaUpdate = (await raw(updated._id))!;
      const viaInsert = (await raw(held._id))!;
      const same = (doc: WebhookDeliveryDocument) => JSON.stringify({ ...doc, _id: "", event_id: "" });
      expect(same(viaInsert)).to.equal(same(viaUpdate));
      expect(viaInsert).to.include({ status, attempt_count: 1, lease_until: null });
      expect(viaInsert.attempts).to.have.length(1);
      expect(viaInsert.last_attempt).to.not.have.property("request");
      // As the API reads it: the last attempt in full.
      expect((await repository.findById(held._id))!.last_attempt).to.deep.equal(outcome(status).attempt);
    });
  }

  it("does not write a held record over another of its event and endpoint, and answers that it was not recorded", async () => {
    const other = { ...claimed("we_b", "evt_twice"), attempt_count: 0, lease_until: null };
    await repository.insertManyOnce([other]);
    const held = claimed("we_b", "evt_twice");
    const fresh = claimed("we_b", "evt_once");
    expect(
      await repository.recordAttemptsEach([
        { id: held._id, attempt: 1, outcome: outcome("succeeded"), now: LATER, held },
        { id: fresh._id, attempt: 1, outcome: outcome("succeeded"), now: LATER, held: fresh },
      ]),
    ).to.deep.equal([false, true]);
    expect(await raw(held._id)).to.equal(null);
    expect(await raw(other._id)).to.deep.equal(other);
    expect(await raw(fresh._id)).to.include({ status: "succeeded" });
  });
});
