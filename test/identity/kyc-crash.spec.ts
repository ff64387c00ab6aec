// A process killed between KYC decisions and the relay of their events loses none and doubles none. Users are
// approved or rejected in a burst; the kill comes while decided users still hold their event in their outbox
// (read from the database after the kill, before the restart). After the restart every decided user has exactly
// one event of its decision's type in the log and at the receiver (signed; a retried attempt repeats the same
// event, never a second one), no event lacks its decision, and each event's object matches the user.
import { expect } from "chai";
import { MongoClient } from "mongodb";
import { verifyWebhookSignature } from "../../src/webhooks/verify-signature.ts";
import { until } from "../support/eventually.ts";
import { uniquePhone } from "../support/phones.ts";
import { freePort, startDatabaseProcess, startServiceProcess, type RunningProcess } from "../support/processes.ts";
import { WebhookReceiver } from "../webhooks/support/receiver.ts";

const KEY = "svc_test_kyccrashkyccrashkyccrash0001";
const USERS = 120;
const TYPE_OF_STATUS: Record<string, string> = { approved: "kyc.approved", rejected: "kyc.rejected" };

interface StoredUser {
  _id: string;
  kyc_status: string;
  outbox?: { id: string; type: string }[];
}

describe("KYC decisions across a crash (SIGKILL)", function () {
  this.timeout(90_000);
  let database: (RunningProcess & { uri: string }) | null = null;
  let service: RunningProcess | null = null;
  let client: MongoClient | null = null;
  let receiver: WebhookReceiver | null = null;

  after(async () => {
    await service?.kill("SIGKILL");
    await receiver?.close();
    await client?.close();
    await database?.kill();
  });

  it("relays every kyc.approved and kyc.rejected exactly once after SIGKILL and restart", async () => {
    database = await startDatabaseProcess();
    const uri = `${database.uri.replace(/\/?$/, "")}/svc_kyc_crash`;
    client = await MongoClient.connect(uri);
    const users = client.db().collection<StoredUser>("users");
    const events = client.db().collection("events");
    receiver = await WebhookReceiver.start();
    // A short webhook time-out: an attempt the kill cut off is leased for about that long before it is retried.
    const env = { SVC_SANDBOX_KEY: KEY, PORT: String(await freePort()), GRPC_PORT: String(await freePort()), SVC_WEBHOOK_TIMEOUT_MS: "1500" };

    // No sweeping in the first life: only requests relay, so the kill leaves decided but unrelayed events.
    let running = await startServiceProcess(uri, { ...env, SVC_RELAY_SWEEP_MS: "3600000" });
    service = running;
    const call = async (method: string, path: string, body: unknown = {}) => {
      const response = await fetch(`${running.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
        ...(method === "GET" ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    const endpoint = await call("POST", "/v1/webhook-endpoints", { url: receiver.url("/kyc"), event_types: ["kyc.approved", "kyc.rejected"] });
    expect(endpoint.status).to.equal(201);
    const secret = endpoint.body.secret as string;
    const sessions = await Promise.all(
      Array.from({ length: USERS }, async () => {
        const user = await call("POST", "/v1/users", { phone: uniquePhone() });
        const session = await call("POST", `/v1/users/${user.body.id}/kyc-sessions`);
        expect(session.status).to.equal(201);
        return session.body.id as string;
      }),
    );

    let next = 0;
    const burst = async () => {
      while (next < sessions.length) {
        const index = next++;
        // Every other session rejected, the rest approved.
        const [action, body] = index % 2 === 0 ? ["approve", {}] : ["reject", { reason: "Document unreadable" }];
        await fetch(`${running.baseUrl}/v1/sandbox/kyc-sessions/${sessions[index]}/${action}`, {
          method: "POST",
          headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        }).catch(() => null);
      }
    };
    const workers = Array.from({ length: 12 }, burst);
    const caught = await until(
      async () =>
        (await users.countDocuments({ kyc_status: { $in: ["approved", "rejected"] } })) >= 20 &&
        (await users.countDocuments({ "outbox.0": { $exists: true } })) > 0,
      30_000,
    );
    await running.kill("SIGKILL");
    await Promise.all(workers);
    expect(caught, "a moment with decided but unrelayed events was seen").to.equal(true);

    // What the kill left: decided users whose event is still in their outbox, of their decision's type.
    const heldAtKill = await users.find({ "outbox.0": { $exists: true } }).toArray();
    expect(heldAtKill.length, "users holding an unrelayed event at the kill").to.be.greaterThan(0);
    for (const user of heldAtKill) {
      expect(
        user.outbox!.map((e) => e.type),
        `outbox of user ${user._id}`,
      ).to.deep.equal([TYPE_OF_STATUS[user.kyc_status]]);
    }

    running = await startServiceProcess(uri, { ...env, SVC_RELAY_SWEEP_MS: "100", SVC_RELAY_STALE_MS: "0" });
    service = running;
    expect(await until(async () => (await users.countDocuments({ "outbox.0": { $exists: true } })) === 0, 20_000), "every outbox relayed").to.equal(
      true,
    );

    // The log: one event per decided user, of its decision's type; none without its decision.
    const decided = await users.find({ kyc_status: { $in: ["approved", "rejected"] } }).toArray();
    const statusOf = new Map(decided.map((u) => [String(u._id), u.kyc_status]));
    expect([...statusOf.values()]).to.include.members(["approved", "rejected"]);
    const logged = await events.find({ type: { $in: ["kyc.approved", "kyc.rejected"] } }).toArray();
    const loggedPerUser = new Map<string, { id: string; type: string }[]>();
    for (const event of logged) {
      const userId = String((event.data as { object: { user_id: string } }).object.user_id);
      loggedPerUser.set(userId, [...(loggedPerUser.get(userId) ?? []), { id: String(event._id), type: String(event.type) }]);
    }
    for (const [id, status] of statusOf) {
      expect(
        loggedPerUser.get(id)?.map((e) => e.type),
        `events of user ${id}`,
      ).to.deep.equal([TYPE_OF_STATUS[status]]);
    }
    expect(
      [...loggedPerUser.keys()].filter((id) => !statusOf.has(id)),
      "events without their decision",
    ).to.deep.equal([]);
    // The event held at the kill is the one logged (same id), not a copy made again.
    for (const user of heldAtKill) {
      expect(
        loggedPerUser.get(String(user._id))?.map((e) => e.id),
        `the held event of ${user._id}`,
      ).to.deep.equal(user.outbox!.map((e) => e.id));
    }

    // The receiver: every logged event arrives; per user one event id, of the right type, signed, its object
    // matching the user as GET answers it now. A repeated receipt (an attempt cut by the kill, retried) is the same event.
    const expected = new Set(logged.map((e) => String(e._id)));
    const delivered = await until(async () => [...expected].every((id) => receiver!.received.some((r) => r.body?.id === id)), 30_000);
    expect(delivered, "every kyc event delivered").to.equal(true);
    const receivedPerUser = new Map<string, Set<string>>();
    const bodyOf = new Map<string, string>();
    for (const receipt of receiver.received) {
      expect(verifyWebhookSignature(Buffer.from(receipt.rawBody), receipt.headers["svc-signature"] as string, secret), "signature").to.equal(true);
      const id = String(receipt.body.id);
      expect([receipt.headers["svc-event-id"], receipt.headers["svc-event-type"]], "headers name the body's event").to.deep.equal([
        id,
        receipt.body.type,
      ]);
      const rawBody = Buffer.from(receipt.rawBody).toString("utf8");
      expect(bodyOf.get(id) ?? rawBody, `every receipt of ${id} carries the same event`).to.equal(rawBody);
      bodyOf.set(id, rawBody);
      const userId = String(receipt.body.data.object.user_id);
      receivedPerUser.set(userId, (receivedPerUser.get(userId) ?? new Set()).add(id));
    }
    expect([...receivedPerUser.keys()].sort(), "users with a receipt are the decided users").to.deep.equal([...statusOf.keys()].sort());
    for (const [id, status] of statusOf) {
      expect([...(receivedPerUser.get(id) ?? [])], `event ids received for user ${id}`).to.deep.equal(loggedPerUser.get(id)!.map((e) => e.id));
      const received = JSON.parse(bodyOf.get(loggedPerUser.get(id)![0]!.id)!);
      expect(received.type).to.equal(TYPE_OF_STATUS[status]);
      const user = await call("GET", `/v1/users/${id}`);
      expect(received.data.object, `object of ${id}`).to.deep.equal({ object: "kyc", user_id: id, status: user.body.kyc_status, livemode: false });
    }
  });
});
