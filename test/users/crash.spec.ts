// A process killed between writing users and relaying their user.created events loses nothing: after a
// restart every user has exactly one user.created event and no event lacks its user.
import { expect } from "chai";
import { MongoClient } from "mongodb";
import { uniquePhone } from "../support/phones.ts";
import { startDatabaseProcess, startServiceProcess, type RunningProcess } from "../support/processes.ts";
import { until } from "../support/eventually.ts";

const KEY = "svc_test_crashtestcrashtestcrashtest01";

describe("users: crash between creation and relay", function () {
  this.timeout(60_000);
  let database: (RunningProcess & { uri: string }) | null = null;
  let service: RunningProcess | null = null;
  let client: MongoClient | null = null;

  after(async () => {
    await service?.kill("SIGKILL");
    await client?.close();
    await database?.kill();
  });

  it("relays every user.created exactly once after SIGKILL and restart", async () => {
    database = await startDatabaseProcess();
    const uri = `${database.uri.replace(/\/?$/, "")}/svc_crash`;
    client = await MongoClient.connect(uri);
    const users = client.db().collection("users");
    const events = client.db().collection("events");

    // No sweeping in the first life: only requests relay, so the kill leaves their unrelayed events behind.
    let running = await startServiceProcess(uri, { SVC_SANDBOX_KEY: KEY, SVC_RELAY_SWEEP_MS: "3600000" });
    service = running;
    const post = () =>
      fetch(`${running.baseUrl}/v1/users`, {
        method: "POST",
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ phone: uniquePhone() }),
      }).catch(() => null);
    let sent = 0;
    const burst = async () => {
      while (sent < 2000) {
        sent++;
        await post();
      }
    };
    const workers = Array.from({ length: 24 }, burst);
    // Kill while users are being written and their outboxes still hold events.
    const caught = await until(
      async () => (await users.countDocuments({})) >= 150 && (await users.countDocuments({ "outbox.0": { $exists: true } })) > 0,
      30_000,
    );
    await running.kill("SIGKILL");
    await Promise.all(workers);
    expect(caught, "a moment with unrelayed events was seen").to.equal(true);
    const unrelayedAtCrash = await users.countDocuments({ "outbox.0": { $exists: true } });
    expect(unrelayedAtCrash, "users left with unrelayed events by the crash").to.be.greaterThan(0);

    running = await startServiceProcess(uri, { SVC_SANDBOX_KEY: KEY, SVC_RELAY_SWEEP_MS: "100", SVC_RELAY_STALE_MS: "0" });
    service = running;
    const drained = await until(async () => (await users.countDocuments({ "outbox.0": { $exists: true } })) === 0, 20_000);
    expect(drained, "every outbox was relayed after the restart").to.equal(true);

    const userIds = (await users.find({}, { projection: { _id: 1 } }).toArray()).map((u) => String(u._id));
    const created = await events.find({ type: "user.created" }).toArray();
    const perUser = new Map<string, number>();
    for (const event of created) {
      const id = String((event.data as { object: { id: string } }).object.id);
      perUser.set(id, (perUser.get(id) ?? 0) + 1);
    }
    expect(userIds.length).to.be.greaterThan(0);
    for (const id of userIds) expect(perUser.get(id), `user.created events of user ${id}`).to.equal(1);
    const orphans = [...perUser.keys()].filter((id) => !userIds.includes(id));
    expect(orphans, "events without their user").to.deep.equal([]);
    expect(await events.countDocuments({ fanned_out: false })).to.equal(0);
  });
});
