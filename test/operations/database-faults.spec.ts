// Database faults injected under the service with the server's `failCommand` fail point (the embedded server's
// configureFailPoint, as mongod's test builds have it): a failed insert, a dropped connection, a slow command.
// Each fail point is scoped to the test service's own database (`namespace`), since the suite's server is shared.
import { randomUUID } from "node:crypto";
import { expect } from "chai";
import type { Document } from "mongodb";
import { SimulatedCustodian } from "../../src/wallets/custodian.ts";
import { eventually } from "../support/eventually.ts";
import { uniquePhone } from "../support/phones.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { WebhookReceiver } from "../webhooks/support/receiver.ts";

/** Sets `failCommand` on the test server for `commands` on `collection` of the service's database. */
/** Arms failCommand; answers how often it had fired before (the count is the server's, since it started). */
async function failCommand(svc: TestService, collection: string, commands: string[], times: number, data: Document): Promise<number> {
  const namespace = `${svc.database.db.databaseName}.${collection}`;
  const armed = await svc.database.db
    .admin()
    .command({ configureFailPoint: "failCommand", mode: { times }, data: { failCommands: commands, namespace, ...data } });
  return Number(armed.count);
}

async function clearFailCommand(svc: TestService): Promise<void> {
  await svc.database.db.admin().command({ configureFailPoint: "failCommand", mode: "off" });
}

describe("database faults under the service (failCommand)", function () {
  this.timeout(30_000);
  let svc: TestService | null = null;
  let worker: TestService | null = null;
  before(async function () {
    // configureFailPoint exists on the embedded server and on mongod started with enableTestCommands only.
    const probe = await startTestService();
    try {
      await probe.database.db.admin().command({ configureFailPoint: "failCommand", mode: "off" });
    } catch {
      await probe.stop();
      this.skip();
    }
    await probe.stop();
  });
  afterEach(async () => {
    await worker?.stop();
    worker = null;
    if (svc) {
      await clearFailCommand(svc).catch(() => {});
      await svc.stop();
    }
    svc = null;
  });

  it("a failed insert of the user: 500 internal_error without driver text, nothing written, and a retry with the same Idempotency-Key creates it", async () => {
    svc = await startTestService();
    const users = svc.database.db.collection("users");
    const events = svc.database.db.collection("events");
    const eventsBefore = await events.countDocuments();
    const phone = uniquePhone();
    const key = randomUUID();
    // 8 UnknownError is not retryable: the driver gives it to the service as it is.
    await failCommand(svc, "users", ["insert"], 1, { errorCode: 8, errmsg: "injected insert failure" });
    const failed = await svc.request("POST", "/v1/users", { body: { phone }, headers: { "idempotency-key": key } });
    expect(failed.status, failed.text).to.equal(500);
    expect(failed.body.error.code).to.equal("internal_error");
    expect(failed.text).not.to.match(/injected|failCommand|UnknownError|Mongo/i);
    expect(await users.countDocuments({ phone })).to.equal(0);
    expect(await events.countDocuments()).to.equal(eventsBefore);

    const retried = await svc.request("POST", "/v1/users", { body: { phone }, headers: { "idempotency-key": key } });
    expect(retried.status, retried.text).to.equal(201);
    expect(retried.body.phone).to.equal(phone);
    expect(await users.countDocuments({ phone })).to.equal(1);
    const created = await eventually(
      () => svc!.request("GET", "/v1/events?type=user.created&limit=10"),
      (r) => r.body.data.some((e: { data: { object: { id: string } } }) => e.data.object.id === retried.body.id),
      5000,
    );
    expect(created.body.data.filter((e: { data: { object: { id: string } } }) => e.data.object.id === retried.body.id)).to.have.length(1);
    // A replay answers the same user.
    const replayed = await svc.request("POST", "/v1/users", { body: { phone }, headers: { "idempotency-key": key } });
    expect(replayed.status).to.equal(201);
    expect(replayed.body.id).to.equal(retried.body.id);
  });

  it("a connection dropped during a worker's delivery claim: the delivery is still attempted and delivered", async () => {
    // An API process records the delivery; a worker process hears of it and claims it (the claims of one turn are
    // one update of webhook_deliveries, the first update the delivery sees) before the attempt: that claim is what
    // loses its connection.
    svc = await startTestService({ env: { SVC_ROLE: "api" } });
    worker = await startTestService({ databaseUri: svc.databaseUri, env: { SVC_ROLE: "worker" } });
    const receiver = await WebhookReceiver.start();
    try {
      const endpoint = await svc.request("POST", "/v1/webhook-endpoints", { body: { url: receiver.url("/faults") } });
      expect(endpoint.status).to.equal(201);
      // A multi-document update is not a retryable write: the driver gives up at once, and the service itself must
      // come back to the delivery.
      const firedBefore = await failCommand(svc, "webhook_deliveries", ["update"], 1, { closeConnection: true });
      const user = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
      expect(user.status).to.equal(201);
      await receiver.waitUntil((received) => received.some((r) => r.body?.data?.object?.id === user.body.id), 15_000);
      const fired = await svc.database.db.admin().command({ configureFailPoint: "failCommand", mode: "off" });
      expect(Number(fired.count) - firedBefore, "times the fail point fired").to.equal(1);
      const deliveries = svc.database.db.collection("webhook_deliveries");
      const settled = await eventually(
        () => deliveries.find({ endpoint_id: endpoint.body.id }).toArray(),
        (docs) => docs.length > 0 && docs.every((d) => d.status === "succeeded"),
        10_000,
      );
      expect(settled).to.have.length(1);
      // The claim was refused before it ran: the attempt that delivered is the delivery's first and only one.
      expect(settled[0]!.attempt_count).to.equal(1);
      expect(settled[0]!.attempts.map((a: Document) => a.response_status)).to.deep.equal([200]);
    } finally {
      await receiver.close();
    }
  });

  it("a slow findAndModify on Agenda's jobs: the wallet retry runs once and the wallet ends ready", async () => {
    const custodian = new SimulatedCustodian();
    svc = await startTestService({ custodian, timings: { walletRetryDelaysMs: [50, 50, 50, 50, 50], jobPollMs: 100 } });
    // Every job lock (Agenda locks with findAndModify) waits 1.5 s for a while.
    await failCommand(svc, "jobs", ["findAndModify"], 3, { blockConnection: true, blockTimeMS: 1500 });
    custodian.failNext(1);
    const calls = custodian.calls;
    const created = await svc.request("POST", "/v1/users", { key: svc.liveKey, body: { phone: uniquePhone() } });
    expect(created.status).to.equal(201);
    expect(created.body.wallet_status).to.equal("pending");
    const ready = await eventually(
      () => svc!.request("GET", `/v1/users/${created.body.id}`, { key: svc!.liveKey }),
      (r) => r.body.wallet_status !== "pending",
      20_000,
    );
    expect(ready.body.wallet_status).to.equal("ready");
    // The synchronous attempt and exactly one retry, however slowly the job was locked.
    expect(custodian.calls - calls).to.equal(2);
    const wallets = await svc.request("GET", `/v1/users/${created.body.id}/wallets`, { key: svc.liveKey });
    expect(wallets.body.data).to.have.length(1);
    const fired = await svc.database.db.admin().command({ configureFailPoint: "failCommand", mode: "off" });
    expect(Number(fired.count), "slowed job locks").to.be.at.least(1);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(custodian.calls - calls, "no second run of the retry").to.equal(2);
  });
});
