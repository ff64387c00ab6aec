// First attempts held in flight across SIGKILL: the service (SVC_ROLE=all) on a database process sends the first
// attempts of the events it relays at once and holds their delivery records until their outcomes. The receiver
// never answers an attempt 1, and the service is killed while those attempts are open: before the records are
// written (within 2 s: no record exists), and after (they are written pending, their attempt leased). Started
// again, the batch's guarantee job records what the dead process held, and each delivery goes on from there: attempt
// 1 counted as lost, attempt 2 sent and succeeded, exactly one record per event and endpoint, no job left.
import { expect } from "chai";
import { MongoClient } from "mongodb";
import { FIRST_ATTEMPTS_JOB } from "../../src/webhooks/first-attempt-guarantees.ts";
import { DELIVERY_JOB } from "../../src/webhooks/webhook-delivery.ts";
import { eventually } from "../support/eventually.ts";
import { uniquePhone } from "../support/phones.ts";
import { startDatabaseProcess, startServiceProcess, type RunningProcess } from "../support/processes.ts";
import { WebhookReceiver } from "../webhooks/support/receiver.ts";

const SANDBOX_KEY = "svc_test_firstattemptcrashfirstattempt01";
/** Longer than the 2 s after which a held record is written pending, with room for the test to kill in between. */
const TIMEOUT_MS = 4000;
const USERS = 3;

describe("first attempts held in flight across SIGKILL of the service", function () {
  this.timeout(90_000);
  let database: (RunningProcess & { uri: string }) | null = null;
  let service: (RunningProcess & { baseUrl: string }) | null = null;
  let receiver: WebhookReceiver | null = null;
  let client: MongoClient | null = null;
  let uri = "";
  /** When each attempt 1's request was closed (by the kill), by event id. */
  const closedAt = new Map<string, number>();
  const env = {
    SVC_ROLE: "all",
    SVC_SANDBOX_KEY: SANDBOX_KEY,
    SVC_JOB_POLL_MS: "100",
    SVC_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    SVC_WEBHOOK_RETRY_SCHEDULE: "1000ms,1000ms,1000ms,1000ms,1000ms,1000ms",
  };
  const headers = { authorization: `Bearer ${SANDBOX_KEY}`, "content-type": "application/json" };
  const collection = (name: string) => client!.db().collection(name);

  before(async () => {
    database = await startDatabaseProcess();
    uri = `${database.uri.replace(/\/?$/, "")}/svc_first_attempt_crash`;
    client = await MongoClient.connect(uri);
    // Attempt 1 is never answered: its request stays open until the sender's process dies. Later attempts succeed.
    receiver = await WebhookReceiver.start((req, res, received) => {
      if (req.headers["svc-delivery-attempt"] !== "1") return void res.writeHead(200).end();
      res.on("close", () => closedAt.set(String(received.headers["svc-event-id"]), Date.now()));
    });
    service = await startServiceProcess(uri, env);
    const endpoint = await fetch(`${service.baseUrl}/v1/webhook-endpoints`, {
      method: "POST",
      headers,
      body: JSON.stringify({ url: receiver.url("/first"), event_types: ["user.created"] }),
    });
    expect(endpoint.status).to.equal(201);
  });
  // A case that failed between its kill and its restart leaves the next one a service.
  beforeEach(async () => {
    service ??= await startServiceProcess(uri, env);
  });
  after(async () => {
    await service?.kill("SIGKILL");
    await receiver?.close();
    await client?.close();
    await database?.kill();
  });

  /** Creates USERS users; answers their user.created event ids once the receiver has every attempt 1 open. */
  const createUsers = async (): Promise<string[]> => {
    const users = await Promise.all(
      Array.from({ length: USERS }, () =>
        fetch(`${service!.baseUrl}/v1/users`, { method: "POST", headers, body: JSON.stringify({ phone: uniquePhone() }) }),
      ),
    );
    expect(users.map((u) => u.status)).to.deep.equal(Array(USERS).fill(201));
    const userIds = await Promise.all(users.map(async (u) => ((await u.json()) as { id: string }).id));
    const events = await collection("events")
      .find({ type: "user.created", "data.object.id": { $in: userIds } })
      .toArray();
    const eventIds = events.map((e) => String(e._id));
    expect(eventIds).to.have.length(USERS);
    await receiver!.waitUntil(() => eventIds.every((id) => receiver!.forEvent(id).length > 0), 10_000);
    return eventIds;
  };

  /** Each delivery recovered: attempt 1 counted as lost, attempt 2 sent once the first was over, and no job left. */
  const expectRecovered = async (eventIds: string[]) => {
    const deliveries = await eventually(
      () =>
        collection("webhook_deliveries")
          .find({ event_id: { $in: eventIds } })
          .toArray(),
      (found) => found.length >= eventIds.length && found.every((d) => d.status !== "pending"),
      30_000,
    );
    expect(deliveries.map((d) => d.event_id).sort(), "one record per event").to.deep.equal([...eventIds].sort());
    for (const delivery of deliveries) {
      expect(delivery, String(delivery._id)).to.include({ status: "succeeded", attempt_count: 2, lease_until: null });
      const history = (delivery.attempts as { response_status: number | null; error: string | null }[]).map((a) => [a.error, a.response_status]);
      expect(history, String(delivery._id)).to.deep.equal([
        ["internal_error", null],
        [null, 200],
      ]);
    }
    for (const id of eventIds) {
      const received = receiver!.forEvent(id);
      expect(
        received.map((r) => r.headers["svc-delivery-attempt"]),
        id,
      ).to.deep.equal(["1", "2"]);
      expect(closedAt.get(id), `attempt 1 of ${id} closed`).to.be.a("number");
      expect(received[1]!.receivedAt, `attempt 2 of ${id} after attempt 1 was over`).to.be.at.least(closedAt.get(id)!);
    }
    await eventually(
      () => collection("jobs").countDocuments({ name: { $in: [FIRST_ATTEMPTS_JOB, DELIVERY_JOB] } }),
      (count) => count === 0,
    );
  };

  it("records first attempts killed before their records were written, and sends attempt 2", async () => {
    const eventIds = await createUsers();
    await service!.kill("SIGKILL");
    service = null;
    expect(await collection("webhook_deliveries").countDocuments({ event_id: { $in: eventIds } }), "records written before the kill").to.equal(0);
    const guarantees = await collection("jobs").find({ name: FIRST_ATTEMPTS_JOB }).toArray();
    expect(guarantees.flatMap((j) => j.data.eventIds).sort(), "the events behind guarantee jobs").to.deep.equal([...eventIds].sort());
    service = await startServiceProcess(uri, env);
    await expectRecovered(eventIds);
  });

  it("goes on from records written pending before the kill, and sends attempt 2", async () => {
    const eventIds = await createUsers();
    const pendingLeased = { event_id: { $in: eventIds }, status: "pending", attempt_count: 1, attempts: [], lease_until: { $ne: null } };
    await eventually(
      () => collection("webhook_deliveries").countDocuments(pendingLeased),
      (count) => count === USERS,
      TIMEOUT_MS,
    );
    await service!.kill("SIGKILL");
    service = null;
    const written = await collection("webhook_deliveries")
      .find({ event_id: { $in: eventIds } })
      .toArray();
    expect(written.length, "records written").to.equal(USERS);
    for (const record of written) expect(record, "as written before the kill").to.deep.include({ status: "pending", attempt_count: 1, attempts: [] });
    expect(
      written.every((record) => record.lease_until instanceof Date),
      "attempts leased",
    ).to.equal(true);
    service = await startServiceProcess(uri, env);
    await expectRecovered(eventIds);
  });
});
