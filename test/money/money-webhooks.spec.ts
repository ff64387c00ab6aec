// The four money events delivered to a real local receiver: each signed with the endpoint's secret (checked with
// the receiver-side verifier), each `data.object` the Transaction as GET /v1/transactions/{id} answered it at the
// state the event reports.
import { expect } from "chai";
import { verifyWebhookSignature } from "../../src/webhooks/verify-signature.ts";
import { eventually } from "../support/eventually.ts";
import type { TestService } from "../support/test-service.ts";
import { createEndpoint, createUser, publishKycApproved } from "../webhooks/support/fixtures.ts";
import { WebhookReceiver, type ReceivedWebhook } from "../webhooks/support/receiver.ts";
import { startWebhookTestService } from "../webhooks/support/fixtures.ts";

const MONEY_EVENTS = ["transaction.received", "transaction.completed", "withdrawal.completed", "withdrawal.failed"];

/** The id with its last character changed (to one it is not: an id may end in any letter). */
function tampered(id: string): string {
  return `${id.slice(0, -1)}${id.endsWith("X") ? "Y" : "X"}`;
}

describe("money events delivered, signed", function () {
  this.timeout(30_000);
  let svc: TestService;
  let receiver: WebhookReceiver;

  before(async () => {
    svc = await startWebhookTestService({ timings: { jobPollMs: 100 } });
    receiver = await WebhookReceiver.start();
  });
  after(async () => {
    await receiver.close();
    await svc.stop();
  });

  it("delivers transaction.received, transaction.completed, withdrawal.completed and withdrawal.failed, signed, with the transaction as read", async () => {
    const endpoint = await createEndpoint(svc, { url: receiver.url("/money"), event_types: MONEY_EVENTS });
    expect(endpoint.secret).to.be.a("string");
    const user = await createUser(svc);
    await publishKycApproved(svc, user.id);
    const read = async (id: string) => {
      const response = await svc.request("GET", `/v1/transactions/${id}`);
      expect(response.status, response.text).to.equal(200);
      return response.body;
    };
    /** The webhooks received about one transaction, of one type. */
    const deliveredOf = (id: string, type: string): ReceivedWebhook[] =>
      receiver.received.filter((r) => r.body?.type === type && r.body?.data?.object?.id === id);

    // A deposit: received while pending, completed by the simulator's complete.
    const deposit = await svc.request("POST", `/v1/sandbox/users/${user.id}/deposits`, {
      body: { amount_usd: 50, fee_usd: 1.5, complete_after_seconds: 3600 },
    });
    expect(deposit.status, deposit.text).to.equal(201);
    const depositPending = await read(deposit.body.id);
    expect(depositPending.status).to.equal("pending");
    expect(depositPending).to.deep.equal(deposit.body);
    const completed = await svc.request("POST", `/v1/sandbox/transactions/${deposit.body.id}/complete`);
    expect(completed.status, completed.text).to.equal(200);
    const depositCompleted = await read(deposit.body.id);
    expect(depositCompleted).to.deep.equal(completed.body);
    expect(depositCompleted.status).to.equal("completed");

    // Two sandbox withdrawals: one completes by itself after 2 s, 13.13 fails with destination_rejected.
    const paid = await svc.request("POST", `/v1/users/${user.id}/withdrawals`, { body: { amount_usd: 20, description: "rent" } });
    expect(paid.status, paid.text).to.equal(201);
    const rejected = await svc.request("POST", `/v1/users/${user.id}/withdrawals`, { body: { amount_usd: 13.13 } });
    expect(rejected.status, rejected.text).to.equal(201);
    const paidCompleted = await eventually(
      () => read(paid.body.id),
      (t) => t.status === "completed",
      8000,
    );
    const rejectedFailed = await eventually(
      () => read(rejected.body.id),
      (t) => t.status === "failed",
      8000,
    );
    expect(rejectedFailed).to.include({ failure_code: "destination_rejected" });

    const expected: [string, string, Record<string, unknown>][] = [
      ["transaction.received", deposit.body.id, depositPending],
      ["transaction.completed", deposit.body.id, depositCompleted],
      ["transaction.completed", paid.body.id, paidCompleted],
      ["withdrawal.completed", paid.body.id, paidCompleted],
      ["withdrawal.failed", rejected.body.id, rejectedFailed],
    ];
    await receiver.waitUntil(() => expected.every(([type, id]) => deliveredOf(id, type).length > 0), 10_000);
    for (const [type, id, object] of expected) {
      const [webhook, ...again] = deliveredOf(id, type);
      expect(again, `${type} of ${id} delivered once`).to.deep.equal([]);
      expect(
        verifyWebhookSignature(webhook!.rawBody, webhook!.headers["svc-signature"], endpoint.secret),
        `${type}: the signature verifies`,
      ).to.equal(true);
      expect(verifyWebhookSignature(webhook!.rawBody.replace(id, tampered(id)), webhook!.headers["svc-signature"], endpoint.secret)).to.equal(false);
      expect(verifyWebhookSignature(webhook!.rawBody, webhook!.headers["svc-signature"], "whsec_not_the_secret")).to.equal(false);
      expect(webhook!.headers["svc-event-id"]).to.equal(webhook!.body.id);
      expect(webhook!.body).to.include({ object: "event", type, livemode: false });
      expect(webhook!.body.data.object, `${type}: data.object is the transaction as read then`).to.deep.equal(object);
    }
    // Nothing else: no transaction.received for a withdrawal, no event of a failed or canceled state beyond these.
    const money = receiver.received.filter((r) => MONEY_EVENTS.includes(r.body?.type));
    expect(money).to.have.length(expected.length);
    expect(receiver.received.filter((r) => !MONEY_EVENTS.includes(r.body?.type))).to.deep.equal([]);
  });
});
