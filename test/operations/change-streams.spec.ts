// On a replica set, a worker hears of the delivery jobs an API process writes through Agenda's change stream on
// the jobs collection, not a poll. Runs on the suite's embedded server (a one-member replica set, test/support/database.ts) and on a
// MONGODB_URI that names a replica set (skipped on a standalone mongod): with polling set to a minute, only the
// change stream can deliver within seconds.
import { expect } from "chai";
import { isReplicaSet, connectDatabase } from "../../src/store/database.ts";
import { freshDatabaseUri } from "../support/database.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { WebhookReceiver } from "../webhooks/support/receiver.ts";

describe("change streams on a replica set", function () {
  this.timeout(30_000);
  let api: TestService | null = null;
  let worker: TestService | null = null;
  let receiver: WebhookReceiver | null = null;

  before(async function () {
    const uri = await freshDatabaseUri("changestreams");
    const probe = await connectDatabase(uri);
    const replicaSet = await isReplicaSet(probe);
    await probe.close();
    if (!replicaSet) this.skip();
    const slowPolls = { jobPollMs: 60_000 };
    api = await startTestService({ databaseUri: uri, env: { SVC_ROLE: "api" }, timings: slowPolls });
    worker = await startTestService({ databaseUri: uri, env: { SVC_ROLE: "worker" }, timings: slowPolls });
    receiver = await WebhookReceiver.start();
  });
  after(async () => {
    await receiver?.close();
    await worker?.stop();
    await api?.stop();
  });

  it("delivers an event created through an API process within seconds, with polls a minute apart", async () => {
    await api!.request("POST", "/v1/webhook-endpoints", { body: { url: receiver!.url("/cs") } });
    const created = await api!.request("POST", "/v1/users", { body: { phone: "+14155550188" } });
    expect(created.status).to.equal(201);
    await receiver!.waitUntil((received) => received.some((r) => r.body?.data?.object?.id === created.body.id), 5000);
  });
});
