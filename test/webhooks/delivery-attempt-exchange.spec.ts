// Each attempt keeps its request as sent and the receiver's answer (status, headers, the first 4 KiB of the body,
// duration), in a history of at most 10 attempts, and the API shows them.
import { expect } from "chai";
import { eventually } from "../support/eventually.ts";
import type { TestService } from "../support/test-service.ts";
import { createEndpoint, createUser, startWebhookTestService, userCreatedEventId } from "./support/fixtures.ts";
import { WebhookReceiver, type ReceivedWebhook } from "./support/receiver.ts";

/** 4,095 ASCII bytes, then "é" (2 bytes) across the 4 KiB mark, then more: kept up to the character before it. */
const LONG_BODY = `${"a".repeat(4095)}é${"z".repeat(1000)}`;

describe("webhook delivery attempts: request and response", () => {
  let svc: TestService;
  let receiver: WebhookReceiver;
  let answering: { id: string; secret: string };
  let failing: { id: string; secret: string };
  /** Requests to /answering by event: the first of each event gets a 500 with LONG_BODY, the next "ok". */
  const answered = new Map<string, ReceivedWebhook[]>();

  before(async () => {
    svc = await startWebhookTestService();
    receiver = await WebhookReceiver.start((req, res, received) => {
      if (req.url === "/failing") {
        res.writeHead(503, { "content-type": "text/plain" }).end("down");
        return;
      }
      const eventId = String(received.headers["svc-event-id"]);
      const seen = answered.get(eventId) ?? [];
      answered.set(eventId, [...seen, received]);
      if (seen.length === 0) {
        res.writeHead(500, {
          "content-type": "text/plain; charset=utf-8",
          "x-receiver-trace": "trace-123",
          "set-cookie": "session=receiver-own-secret",
        });
        res.end(LONG_BODY);
      } else {
        res.writeHead(200, { "content-type": "text/plain" }).end("ok");
      }
    });
    answering = await createEndpoint(svc, { url: receiver.url("/answering"), event_types: ["user.created"] });
  });
  after(async () => {
    await receiver.close();
    await svc.stop();
  });

  async function deliveryOf(endpointId: string, eventId: string, accept: (d: any) => boolean): Promise<any> {
    const list = await eventually(
      () => svc.request("GET", `/v1/webhook-endpoints/${endpointId}/deliveries?limit=100`),
      (r) => r.body.data.some((d: any) => d.event_id === eventId && accept(d)),
      30_000,
    );
    const id = list.body.data.find((d: any) => d.event_id === eventId).id;
    const one = await svc.request("GET", `/v1/webhook-endpoints/${endpointId}/deliveries/${id}`);
    expect(one.status, one.text).to.equal(200);
    return one.body;
  }

  it("shows each attempt's request as signed and the answer's status, headers and first 4 KiB", async () => {
    const user = await createUser(svc);
    const eventId = await userCreatedEventId(svc, user.id);
    const delivery = await deliveryOf(answering.id, eventId, (d) => d.status === "succeeded");
    expect(delivery.attempt_count).to.equal(2);
    expect(delivery.attempts).to.have.length(2);
    const [first, second] = delivery.attempts;

    expect(first).to.include({ response_status: 500, error: "http_500" });
    expect(first.duration_ms).to.be.a("number").at.least(0);
    expect(first.response.body).to.equal("a".repeat(4095));
    expect(first.response.body_truncated).to.equal(true);
    expect(first.response.headers).to.include({
      "x-receiver-trace": "trace-123",
      "content-type": "text/plain; charset=utf-8",
      "set-cookie": "(not kept)",
    });

    // The request is the one the receiver got: the exact body that was signed, and its signature header.
    const got = answered.get(eventId)![0]!;
    expect(first.request.url).to.equal(receiver.url("/answering"));
    expect(first.request.body).to.equal(got.rawBody);
    expect(first.request.body_truncated).to.equal(false);
    expect(first.request.headers["Svc-Signature"]).to.equal(got.headers["svc-signature"]);
    expect(first.request.headers).to.include({
      "Svc-Event-Id": eventId,
      "Svc-Event-Type": "user.created",
      "Svc-Delivery-Attempt": "1",
      "Content-Type": "application/json",
    });
    expect(second.request.headers["Svc-Delivery-Attempt"]).to.equal("2");

    expect(second).to.include({ response_status: 200, error: null });
    expect(second.response).to.deep.include({ body: "ok", body_truncated: false });
    expect(delivery.last_attempt).to.deep.equal(second);
    // Kept once: the stored record's last attempt is its outcome alone, its request and response are in the history.
    const stored = await svc.database.db.collection("webhook_deliveries").findOne({ _id: delivery.id });
    expect(stored!.last_attempt).to.have.keys(["attempted_at", "response_status", "error", "duration_ms"]);
    expect(stored!.attempts.at(-1).request.body).to.equal(second.request.body);
    // Each side's headers are one string, a "name: value" line each, of what the API shows.
    const keptAttempt = stored!.attempts.at(-1);
    const block = (headers: Record<string, string>) =>
      Object.entries(headers)
        .map(([name, value]) => `${name}: ${value}\n`)
        .join("");
    expect(keptAttempt.request.headers).to.equal(block(second.request.headers));
    expect(keptAttempt.response.headers).to.equal(block(second.response.headers));
    // A record written before kept them as name and value pairs, which read the same.
    const asPairs = (text: string) =>
      text
        .split("\n")
        .slice(0, -1)
        .map((line) => ({ name: line.slice(0, line.indexOf(": ")), value: line.slice(line.indexOf(": ") + 2) }));
    await svc.database.db.collection("webhook_deliveries").updateOne(
      { _id: delivery.id },
      {
        $set: {
          "attempts.1.request.headers": asPairs(keptAttempt.request.headers),
          "attempts.1.response.headers": asPairs(keptAttempt.response.headers),
        },
      },
    );
    const older = await svc.request("GET", `/v1/webhook-endpoints/${answering.id}/deliveries/${delivery.id}`);
    expect(older.body.attempts[1]).to.deep.equal(second);

    // The signing secret is never kept, nor the receiver's cookie.
    const text = JSON.stringify(delivery);
    expect(text).to.not.include(answering.secret);
    expect(text).to.not.include(answering.secret.replace(/^whsec_/, ""));
    expect(text).to.not.include("receiver-own-secret");
  });

  it("keeps the latest 10 attempts across replays", async function () {
    // Two cycles of 7 attempts on a shared machine.
    this.timeout(90_000);
    // Made now, so only this test's 14 attempts count towards the 20 failures that would disable it.
    failing = await createEndpoint(svc, { url: receiver.url("/failing"), event_types: ["user.created"] });
    const user = await createUser(svc);
    const eventId = await userCreatedEventId(svc, user.id);
    const failed = await deliveryOf(failing.id, eventId, (d) => d.status === "failed");
    expect(failed.attempts).to.have.length(7);
    expect(failed.attempts.map((a: any) => a.request.headers["Svc-Delivery-Attempt"])).to.deep.equal(["1", "2", "3", "4", "5", "6", "7"]);
    expect(failed.attempts[0].response).to.deep.equal({ headers: failed.attempts[0].response.headers, body: "down", body_truncated: false });

    const replay = await svc.request("POST", `/v1/webhook-endpoints/${failing.id}/deliveries/${failed.id}/replay`, { body: {} });
    expect(replay.status, replay.text).to.equal(200);
    const again = await deliveryOf(failing.id, eventId, (d) => d.status === "failed" && d.updated_at !== failed.updated_at);
    expect(again.attempts).to.have.length(10);
    // The oldest four of the first cycle are gone; the newest is the second cycle's 7th.
    expect(again.attempts.map((a: any) => a.request.headers["Svc-Delivery-Attempt"])).to.deep.equal([
      "5",
      "6",
      "7",
      "1",
      "2",
      "3",
      "4",
      "5",
      "6",
      "7",
    ]);
    expect(again.attempts.at(-1)).to.deep.equal(again.last_attempt);
  });

  it("records no request and no response for an endpoint disabled meanwhile", async () => {
    const disabled = await svc.request("PATCH", `/v1/webhook-endpoints/${failing.id}`, { body: { enabled: false } });
    expect(disabled.status, disabled.text).to.equal(200);
    const user = await createUser(svc);
    const eventId = await userCreatedEventId(svc, user.id);
    const delivery = await deliveryOf(failing.id, eventId, (d) => d.status === "failed");
    expect(delivery.attempts).to.have.length(1);
    expect(delivery.attempts[0]).to.include({ error: "endpoint_disabled", request: null, response: null });
  });
});
