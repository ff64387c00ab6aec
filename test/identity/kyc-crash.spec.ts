// A process killed between KYC decisions and the relay of their events loses none and doubles none: after a
// restart every approved user has exactly one kyc.approved event in the log, delivered to the receiver, and
// no event lacks its decision.
import { expect } from "chai";
import { MongoClient } from "mongodb";
import { freePort, startDatabaseProcess, startServiceProcess, type RunningProcess } from "../support/processes.ts";
import { WebhookReceiver } from "../webhooks/support/receiver.ts";
import { until } from "../support/eventually.ts";

const KEY = "svc_test_kyccrashkyccrashkyccrash0001";
const USERS = 120;

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

  it("relays every kyc.approved exactly once after SIGKILL and restart", async () => {
    database = await startDatabaseProcess();
    const uri = `${database.uri.replace(/\/?$/, "")}/svc_kyc_crash`;
    client = await MongoClient.connect(uri);
    const users = client.db().collection("users");
    const events = client.db().collection("events");
    receiver = await WebhookReceiver.start();
    const env = { SVC_SANDBOX_KEY: KEY, PORT: String(await freePort()), GRPC_PORT: String(await freePort()) };

    // No sweeping in the first life: only requests relay, so the kill leaves decided but unrelayed events.
    let running = await startServiceProcess(uri, { ...env, SVC_RELAY_SWEEP_MS: "3600000" });
    service = running;
    const call = async (method: string, path: string, body: unknown = {}) => {
      const response = await fetch(`${running.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    expect((await call("POST", "/v1/webhook-endpoints", { url: receiver.url("/kyc"), event_types: ["kyc.approved"] })).status).to.equal(201);
    const sessions = await Promise.all(
      Array.from({ length: USERS }, async (_, i) => {
        const user = await call("POST", "/v1/users", { phone: `+1718555${String(i).padStart(4, "0")}` });
        const session = await call("POST", `/v1/users/${user.body.id}/kyc-sessions`);
        expect(session.status).to.equal(201);
        return session.body.id as string;
      }),
    );

    let next = 0;
    const burst = async () => {
      while (next < sessions.length) {
        const id = sessions[next++]!;
        await fetch(`${running.baseUrl}/v1/sandbox/kyc-sessions/${id}/approve`, {
          method: "POST",
          headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
          body: "{}",
        }).catch(() => null);
      }
    };
    const workers = Array.from({ length: 12 }, burst);
    const caught = await until(
      async () =>
        (await users.countDocuments({ kyc_status: "approved" })) >= 20 && (await users.countDocuments({ "outbox.0": { $exists: true } })) > 0,
      30_000,
    );
    await running.kill("SIGKILL");
    await Promise.all(workers);
    expect(caught, "a moment with decided but unrelayed events was seen").to.equal(true);

    running = await startServiceProcess(uri, { ...env, SVC_RELAY_SWEEP_MS: "100", SVC_RELAY_STALE_MS: "0" });
    service = running;
    expect(await until(async () => (await users.countDocuments({ "outbox.0": { $exists: true } })) === 0, 20_000), "every outbox relayed").to.equal(
      true,
    );

    const approved = (await users.find({ kyc_status: "approved" }, { projection: { _id: 1 } }).toArray()).map((u) => String(u._id));
    expect(approved.length).to.be.greaterThan(0);
    const logged = await events.find({ type: "kyc.approved" }).toArray();
    const perUser = new Map<string, string[]>();
    for (const event of logged) {
      const userId = String((event.data as { object: { user_id: string } }).object.user_id);
      perUser.set(userId, [...(perUser.get(userId) ?? []), String(event._id)]);
    }
    for (const id of approved) expect(perUser.get(id), `kyc.approved events of user ${id}`).to.have.length(1);
    expect(
      [...perUser.keys()].filter((id) => !approved.includes(id)),
      "events without their decision",
    ).to.deep.equal([]);

    // Each event reaches the receiver (at least once; deduplicated on the event id it is exactly once).
    const expected = new Set(logged.map((e) => String(e._id)));
    const delivered = await until(
      async () => expected.size > 0 && [...expected].every((id) => receiver!.received.some((r) => r.body?.id === id)),
      30_000,
    );
    expect(delivered, "every kyc.approved delivered").to.equal(true);
  });
});
