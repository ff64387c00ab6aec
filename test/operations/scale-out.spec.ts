// Two API processes and two worker processes on one database (the embedded server run standalone, as
// `npm run mongo:embedded` does): deliveries are recorded once per (event, endpoint) and reach the receiver
// at least once, the rate limit and idempotency keys are shared, a worker killed with SIGKILL does not stop the
// burst from completing, and two workers share the retries of a failing endpoint with no attempt sent twice.
import { expect } from "chai";
import { MongoClient } from "mongodb";
import { startDatabaseProcess, startServiceProcess, type RunningProcess } from "../support/processes.ts";
import { eventually } from "../support/eventually.ts";
import { uniquePhone } from "../support/phones.ts";
import { WebhookReceiver } from "../webhooks/support/receiver.ts";

const SANDBOX_KEY = "svc_test_scaleoutscaleoutscaleout0001";
const ADMIN_TOKEN = "adm_scale_out_test_token";
const BURST = 120;

type Service = RunningProcess & { baseUrl: string };

async function call(base: string, method: string, path: string, init: { key?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const response = await fetch(base + path, {
    method,
    headers: {
      ...(init.key ? { authorization: `Bearer ${init.key}` } : {}),
      ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
      ...init.headers,
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await response.text();
  const json = response.headers.get("content-type")?.startsWith("application/json");
  return { status: response.status, headers: response.headers, body: json && text ? JSON.parse(text) : text };
}

describe("scale-out: two API and two worker processes on one database", function () {
  this.timeout(120_000);
  let database: (RunningProcess & { uri: string }) | null = null;
  const services: Service[] = [];
  let receiver: WebhookReceiver | null = null;
  let client: MongoClient | null = null;
  let apis: Service[] = [];
  let workers: Service[] = [];

  before(async () => {
    database = await startDatabaseProcess();
    const uri = `${database.uri.replace(/\/?$/, "")}/svc_scale`;
    const common = {
      SVC_SANDBOX_KEY: SANDBOX_KEY,
      SVC_ADMIN_TOKEN: ADMIN_TOKEN,
      // A standalone server has no change streams: workers find the jobs API processes write by scanning.
      SVC_JOB_POLL_MS: "50",
      SVC_RELAY_SWEEP_MS: "200",
      // Short attempts, so the lease of an attempt cut short by the kill expires within the test.
      SVC_WEBHOOK_TIMEOUT_MS: "1000",
      SVC_WEBHOOK_RETRY_SCHEDULE: "100ms,100ms,100ms,100ms,100ms,100ms",
    };
    // One after the other: the first bootstraps the Default project, the others adopt it.
    for (const role of ["api", "api", "worker", "worker"]) services.push(await startServiceProcess(uri, { ...common, SVC_ROLE: role }));
    apis = services.slice(0, 2);
    workers = services.slice(2);
    receiver = await WebhookReceiver.start();
    client = await MongoClient.connect(uri);
  });

  after(async () => {
    for (const service of services) await service.kill("SIGKILL");
    await receiver?.close();
    await client?.close();
    await database?.kill();
  });

  it("workers serve only /healthz and /metrics; API processes the API", async () => {
    for (const worker of workers) {
      expect((await call(worker.baseUrl, "GET", "/healthz")).status).to.equal(200);
      expect((await call(worker.baseUrl, "GET", "/metrics")).status).to.equal(200);
      const api = await call(worker.baseUrl, "GET", "/v1/events", { key: SANDBOX_KEY });
      expect(api.status).to.equal(404);
      expect(api.body.error.code).to.equal("route_not_found");
    }
    for (const api of apis) expect((await call(api.baseUrl, "GET", "/v1/events", { key: SANDBOX_KEY })).status).to.equal(200);
  });

  it("delivers a burst once per (event, endpoint) record and at least once each, though a worker is SIGKILLed", async () => {
    const endpoint = await call(apis[0]!.baseUrl, "POST", "/v1/webhook-endpoints", {
      key: SANDBOX_KEY,
      body: { url: receiver!.url("/scale"), event_types: ["user.created"] },
    });
    expect(endpoint.status, JSON.stringify(endpoint.body)).to.equal(201);

    const created: string[] = [];
    const createUser = async (i: number) => {
      const response = await call(apis[i % 2]!.baseUrl, "POST", "/v1/users", { key: SANDBOX_KEY, body: { phone: uniquePhone() } });
      expect(response.status).to.equal(201);
      created.push(response.body.id);
    };
    for (let i = 0; i < BURST / 2; i++) await createUser(i);
    await workers[0]!.kill("SIGKILL");
    for (let i = BURST / 2; i < BURST; i++) await createUser(i);

    const events = client!.db().collection("events");
    const eventIds = (await events.find({ type: "user.created" }, { projection: { _id: 1 } }).toArray()).map((e) => String(e._id));
    expect(eventIds).to.have.length(BURST);
    await receiver!.waitUntil(() => eventIds.every((id) => receiver!.forEvent(id).length >= 1), 60_000);

    const deliveries = client!.db().collection("webhook_deliveries");
    expect(await deliveries.countDocuments({ endpoint_id: endpoint.body.id })).to.equal(BURST);
    const perEvent = await deliveries.aggregate([{ $group: { _id: "$event_id", n: { $sum: 1 } } }, { $match: { n: { $gt: 1 } } }]).toArray();
    expect(perEvent, "events with more than one delivery record").to.deep.equal([]);
    // Receipt comes first; the success is recorded a moment later. An attempt the killed worker had sent but
    // not recorded is sent again by the other once its lease expires: at least once.
    const settled = await eventually(
      () => deliveries.countDocuments({ status: "succeeded" }),
      (n) => n === BURST,
      30_000,
    );
    expect(settled).to.equal(BURST);
  });

  it("shares the retries of a failing endpoint between two workers, each attempt of each delivery sent once", async () => {
    // The worker killed above is replaced: two workers again.
    const uri = `${database!.uri.replace(/\/?$/, "")}/svc_scale`;
    const replacement = await startServiceProcess(uri, {
      SVC_SANDBOX_KEY: SANDBOX_KEY,
      SVC_ADMIN_TOKEN: ADMIN_TOKEN,
      SVC_JOB_POLL_MS: "50",
      SVC_WEBHOOK_TIMEOUT_MS: "1000",
      SVC_WEBHOOK_RETRY_SCHEDULE: "100ms,100ms,100ms,100ms,100ms,100ms",
      SVC_ROLE: "worker",
    });
    services.push(replacement);
    const attemptsByPath = new Map<string, string[]>();
    const failing = await WebhookReceiver.start((req, res) => {
      attemptsByPath.set(req.url!, [...(attemptsByPath.get(req.url!) ?? []), String(req.headers["svc-delivery-attempt"])]);
      res.writeHead(500).end();
    });
    try {
      // One endpoint per event, so that no endpoint reaches the 20 failures that disable it.
      const count = 6;
      for (let i = 0; i < count; i++) {
        const endpoint = await call(apis[0]!.baseUrl, "POST", "/v1/webhook-endpoints", {
          key: SANDBOX_KEY,
          body: { url: failing.url(`/retries-${i}`), event_types: ["kyc.approved"] },
        });
        expect(endpoint.status, JSON.stringify(endpoint.body)).to.equal(201);
      }
      const user = await call(apis[0]!.baseUrl, "POST", "/v1/users", { key: SANDBOX_KEY, body: { phone: uniquePhone() } });
      const session = await call(apis[1]!.baseUrl, "POST", `/v1/users/${user.body.id}/kyc-sessions`, { key: SANDBOX_KEY });
      expect((await call(apis[0]!.baseUrl, "POST", `/v1/sandbox/kyc-sessions/${session.body.id}/approve`, { key: SANDBOX_KEY })).status).to.equal(
        200,
      );
      const paths = Array.from({ length: count }, (_, i) => `/retries-${i}`);
      const attemptsTo = (path: string) => attemptsByPath.get(path) ?? [];
      await failing.waitUntil(() => paths.every((path) => attemptsTo(path).length >= 7), 60_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
      for (const path of paths) expect(attemptsTo(path), path).to.deep.equal(["1", "2", "3", "4", "5", "6", "7"]);
      const deliveries = client!.db().collection("webhook_deliveries");
      const failed = await eventually(
        () => deliveries.countDocuments({ event_type: "kyc.approved", status: "failed", attempt_count: 7 }),
        (n) => n === count,
      );
      expect(failed).to.equal(count);
    } finally {
      await failing.close();
    }
  });

  it("shares the rate limit and idempotency keys across the API processes", async () => {
    const admin = await call(apis[0]!.baseUrl, "POST", "/svc.admin.v1.AdminService/CreateApiKey", {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      body: { project_id: (await client!.db().collection("projects").findOne({}))!._id, livemode: false, rate_limit: 6 },
    });
    expect(admin.status, JSON.stringify(admin.body)).to.equal(200);
    const limited = admin.body.secret as string;
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++) statuses.push((await call(apis[i % 2]!.baseUrl, "GET", "/v1/events?limit=1", { key: limited })).status);
    expect(statuses).to.deep.equal([200, 200, 200, 200, 200, 200, 429, 429, 429]);

    const body = { phone: "+16465559999" };
    const first = await call(apis[0]!.baseUrl, "POST", "/v1/users", { key: SANDBOX_KEY, body, headers: { "idempotency-key": "scale-out-key" } });
    const second = await call(apis[1]!.baseUrl, "POST", "/v1/users", { key: SANDBOX_KEY, body, headers: { "idempotency-key": "scale-out-key" } });
    expect(first.status).to.equal(201);
    expect(second.status).to.equal(201);
    expect(second.headers.get("idempotent-replayed")).to.equal("true");
    expect(second.body).to.deep.equal(first.body);
    expect(second.headers.get("x-request-id")).to.equal(first.headers.get("x-request-id"));
  });

  it("settles the sandbox transactions an API process opens through a worker: a deposit, then a withdrawal", async () => {
    const user = await call(apis[0]!.baseUrl, "POST", "/v1/users", { key: SANDBOX_KEY, body: { phone: uniquePhone() } });
    expect(user.status).to.equal(201);
    const session = await call(apis[1]!.baseUrl, "POST", `/v1/users/${user.body.id}/kyc-sessions`, { key: SANDBOX_KEY });
    expect((await call(apis[0]!.baseUrl, "POST", `/v1/sandbox/kyc-sessions/${session.body.id}/approve`, { key: SANDBOX_KEY })).status).to.equal(200);
    const deposit = await call(apis[0]!.baseUrl, "POST", `/v1/sandbox/users/${user.body.id}/deposits`, {
      key: SANDBOX_KEY,
      body: { amount_usd: 20, complete_after_seconds: 1 },
    });
    expect(deposit.status, JSON.stringify(deposit.body)).to.equal(201);
    // API processes run no background work: the step is a job a worker takes.
    const deposited = await eventually(
      () => call(apis[1]!.baseUrl, "GET", `/v1/transactions/${deposit.body.id}`, { key: SANDBOX_KEY }),
      (read) => read.body.status === "completed",
      15_000,
    );
    expect(deposited.body.status).to.equal("completed");
    const withdrawal = await call(apis[1]!.baseUrl, "POST", `/v1/users/${user.body.id}/withdrawals`, { key: SANDBOX_KEY, body: { amount_usd: 5 } });
    expect(withdrawal.status, JSON.stringify(withdrawal.body)).to.equal(201);
    const withdrawn = await eventually(
      () => call(apis[0]!.baseUrl, "GET", `/v1/transactions/${withdrawal.body.id}`, { key: SANDBOX_KEY }),
      (read) => read.body.status === "completed",
      15_000,
    );
    expect(withdrawn.body.status).to.equal("completed");
    const wallets = await call(apis[0]!.baseUrl, "GET", `/v1/users/${user.body.id}/wallets`, { key: SANDBOX_KEY });
    expect(wallets.body.data[0].balance).to.deep.equal({ available_usd: 15, pending_in_usd: 0, pending_out_usd: 0 });
  });
});
