// A delivery retry across the death of every service process: the service (SVC_ROLE=all) on a database process;
// the endpoint fails attempt 1, whose retry is recorded as the delivery's job; the service is killed with SIGKILL
// before the retry is due and started again. The retry then runs on time (not before its job's nextRunAt, and
// soon after it, or after the restart if that came later), and once.
import { expect } from "chai";
import { MongoClient } from "mongodb";
import { eventually } from "../support/eventually.ts";
import { uniquePhone } from "../support/phones.ts";
import { startDatabaseProcess, startServiceProcess, type RunningProcess } from "../support/processes.ts";
import { WebhookReceiver } from "../webhooks/support/receiver.ts";

const SANDBOX_KEY = "svc_test_retrycrashretrycrashretry0001";
const ADMIN_TOKEN = "adm_retry_crash_test_token";
/** Long enough for both processes to be killed and started again before the retry is due. */
const RETRY_MS = 6000;

describe("a delivery retry after SIGKILL of every service process", function () {
  this.timeout(90_000);
  let database: (RunningProcess & { uri: string }) | null = null;
  let services: (RunningProcess & { baseUrl: string })[] = [];
  let receiver: WebhookReceiver | null = null;
  let client: MongoClient | null = null;
  let uri = "";
  const env = {
    SVC_SANDBOX_KEY: SANDBOX_KEY,
    SVC_ADMIN_TOKEN: ADMIN_TOKEN,
    SVC_JOB_POLL_MS: "100",
    SVC_WEBHOOK_TIMEOUT_MS: "1000",
    SVC_WEBHOOK_RETRY_SCHEDULE: `${RETRY_MS}ms,${RETRY_MS}ms,${RETRY_MS}ms,${RETRY_MS}ms,${RETRY_MS}ms,${RETRY_MS}ms`,
  };
  const start = async () => {
    services.push(await startServiceProcess(uri, env));
  };

  before(async () => {
    database = await startDatabaseProcess();
    uri = `${database.uri.replace(/\/?$/, "")}/svc_retry_crash`;
    client = await MongoClient.connect(uri);
  });
  after(async () => {
    for (const service of services) await service.kill("SIGKILL");
    await receiver?.close();
    await client?.close();
    await database?.kill();
  });

  it("runs the next attempt at its job's time, once", async () => {
    await start();
    // Attempt 1 fails; every later one succeeds.
    receiver = await WebhookReceiver.start((req, res) => res.writeHead(req.headers["svc-delivery-attempt"] === "1" ? 500 : 200).end());
    const api = services[0]!.baseUrl;
    const headers = { authorization: `Bearer ${SANDBOX_KEY}`, "content-type": "application/json" };
    const endpoint = await fetch(`${api}/v1/webhook-endpoints`, { method: "POST", headers, body: JSON.stringify({ url: receiver.url("/retry") }) });
    expect(endpoint.status).to.equal(201);
    const user = await fetch(`${api}/v1/users`, { method: "POST", headers, body: JSON.stringify({ phone: uniquePhone() }) });
    expect(user.status).to.equal(201);

    const deliveries = client!.db().collection("webhook_deliveries");
    const jobs = client!.db().collection("jobs");
    // Attempt 1 recorded: the delivery shows its retry time, and its job holds the same time.
    const recorded = await eventually(
      () => deliveries.findOne({ attempt_count: 1, status: "pending", lease_until: null, next_attempt_at: { $ne: null } }),
      (d) => d !== null,
      20_000,
    );
    const job = await eventually(
      () => jobs.findOne({ name: "webhook-attempt", "data.deliveryId": recorded!._id }),
      (j) => j?.nextRunAt?.getTime() === recorded!.next_attempt_at.getTime(),
    );
    const dueAt = (job!.nextRunAt as Date).getTime();
    expect(dueAt - Date.now(), "time left before the retry").to.be.above(1000);

    for (const service of services) await service.kill("SIGKILL");
    services = [];
    await start();
    // On a loaded machine the processes may come back after the retry's time: then it is due at once.
    const backAt = Date.now();

    await receiver.waitUntil((received) => received.some((r) => r.headers["svc-delivery-attempt"] === "2"), RETRY_MS + 15_000);
    const second = receiver.received.find((r) => r.headers["svc-delivery-attempt"] === "2")!;
    expect(second.receivedAt, "not before its time").to.be.at.least(dueAt);
    // Jobs are polled every 100 ms here; a retry left to a lock's lifetime (60 s) or to no wake-up at all would be
    // tens of seconds late, so 3 s tells them apart while leaving a loaded machine room.
    expect(second.receivedAt - Math.max(dueAt, backAt), "soon after its time (or the restart)").to.be.below(3000);
    const settled = await eventually(
      () => deliveries.findOne({ _id: recorded!._id }),
      (d) => d?.status === "succeeded",
    );
    expect(settled).to.include({ attempt_count: 2 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.received.map((r) => r.headers["svc-delivery-attempt"])).to.deep.equal(["1", "2"]);
    expect(await jobs.countDocuments({ name: "webhook-attempt", "data.deliveryId": recorded!._id })).to.equal(0);
  });
});
