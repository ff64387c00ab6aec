// `npm start` as an operator runs it: SIGTERM or SIGINT to the npm process drains the service and frees its
// ports, within 15 s even while requests and webhook attempts are in flight; SIGKILL of npm (which cannot pass
// anything on) leaves no orphan holding them either.
import http from "node:http";
import { expect } from "chai";
import { MongoClient } from "mongodb";
import { freshDatabaseUri } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";
import { uniquePhone } from "../support/phones.ts";
import { childPids, freePort, isAlive, portIsFree, startProcess, type RunningProcess } from "../support/processes.ts";
import { WebhookReceiver } from "../webhooks/support/receiver.ts";

const SANDBOX_KEY = "svc_test_npmstartnpmstartnpmstart01";

describe("npm start", function () {
  this.timeout(60_000);
  let npm: RunningProcess | null = null;
  let ports: number[] = [];
  let databaseUri = "";

  async function npmStart(env: Record<string, string> = {}): Promise<RunningProcess> {
    ports = [await freePort(), await freePort()];
    databaseUri = await freshDatabaseUri("svc_npm_start");
    const { running } = await startProcess("npm", ["start", "--silent"], {
      env: {
        MONGODB_URI: databaseUri,
        PORT: String(ports[0]),
        GRPC_PORT: String(ports[1]),
        SVC_ADMIN_TOKEN: "adm_npm_start_test_token",
        LOG_LEVEL: "warn",
        ...env,
      },
      ready: /Svc is listening/,
      timeoutMs: 30_000,
    });
    npm = running;
    const health = await fetch(`http://127.0.0.1:${ports[0]}/healthz`);
    expect(health.status).to.equal(200);
    return running;
  }

  async function expectPortsFree(): Promise<void> {
    for (const port of ports) expect(await portIsFree(port), `port ${port} is free`).to.equal(true);
  }

  afterEach(async () => {
    // A failed test must not leave a server behind: kill whatever of the tree is left.
    if (npm) for (const pid of childPids(npm.process.pid!)) if (isAlive(pid)) process.kill(pid, "SIGKILL");
    await npm?.kill("SIGKILL");
    npm = null;
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`drains and exits on ${signal} to the npm process, freeing both ports`, async () => {
      const running = await npmStart();
      const started = Date.now();
      running.process.kill(signal);
      await running.exited;
      expect(Date.now() - started, "time to exit").to.be.below(15_000);
      expect(running.process.exitCode, running.output.join("\n")).to.equal(0);
      await expectPortsFree();
    });
  }

  it("drains and exits within 15 s on SIGTERM while busy, the webhook attempt it cut short kept for a retry", async () => {
    // The receiver answers at once, except for the user whose creation is slow (below): that attempt it never
    // answers, so it ends only at the webhook time-out (10 s) or when the drain cuts it short.
    const phone = uniquePhone();
    const receiver = await WebhookReceiver.start((_req, res, received) => {
      if (received.body?.data?.object?.phone !== phone) res.end("ok");
    });
    let client: MongoClient | null = null;
    try {
      const running = await npmStart({ SVC_BOOTSTRAP: "1", SVC_SANDBOX_KEY: SANDBOX_KEY });
      const base = `http://127.0.0.1:${ports[0]}`;
      const headers = { authorization: `Bearer ${SANDBOX_KEY}`, "content-type": "application/json" };
      const call = (path: string, body: unknown) => fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
      const endpoint = await call("/v1/webhook-endpoints", { url: receiver.url(), event_types: ["user.created"] });
      expect(endpoint.status, await endpoint.clone().text()).to.equal(201);
      for (let i = 0; i < 3; i++) expect((await call("/v1/users", { phone: uniquePhone() })).status).to.equal(201);

      // A creation whose body is still arriving when the signal comes: the drain serves it once its last bytes
      // arrive, 8 s in, and its user's first delivery attempt starts then. Waiting for that attempt's time-out
      // would make the drain last 18 s; the drain cuts it short at its own deadline (10 s) instead.
      const slow = slowRequest(`${base}/v1/users`, JSON.stringify({ phone }), headers, 8000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const started = Date.now();
      running.process.kill("SIGTERM");
      // Creations sent with the signal: answered, or refused once the ports close.
      const racing = Array.from({ length: 8 }, () =>
        call("/v1/users", { phone: uniquePhone() }).then(
          (r) => r.status,
          () => null,
        ),
      );
      await running.exited;
      expect(Date.now() - started, "time to exit").to.be.below(15_000);
      expect(running.process.exitCode, `a drain that finished, not the hard stop:\n${running.output.join("\n")}`).to.equal(0);
      await expectPortsFree();
      const answer = await slow;
      expect(answer.status, `the request in flight was answered: ${answer.body}`).to.equal(201);
      for (const status of await Promise.all(racing)) expect([201, null]).to.include(status);

      // Nothing lost: each user has its delivery, sent or still pending with its next attempt on record and
      // nobody holding it. The attempt the drain cut short failed with internal_error (the service's failure,
      // not the receiver's: the endpoint's count of consecutive failures stays 0), and is retried on schedule.
      client = await MongoClient.connect(databaseUri);
      const db = client.db();
      const users = await db.collection("users").find({}).toArray();
      const deliveries = await db.collection("webhook_deliveries").find({}).toArray();
      expect(deliveries).to.have.length(users.length);
      const cut = deliveries.filter((d) => d.status === "pending");
      expect(cut, JSON.stringify(deliveries)).to.have.length(1);
      expect(cut[0]).to.deep.include({ attempt_count: 1, lease_until: null });
      expect(cut[0]!.last_attempt).to.include({ error: "internal_error", response_status: null });
      expect(cut[0]!.next_attempt_at.getTime()).to.be.greaterThan(Date.now());
      expect(deliveries.filter((d) => d.status === "succeeded")).to.have.length(users.length - 1);
      expect(await db.collection("webhook_endpoints").distinct("consecutive_failures")).to.deep.equal([0]);
    } finally {
      await client?.close();
      await receiver.close();
    }
  });

  it("exits within seconds when npm is killed with SIGKILL, freeing both ports", async () => {
    const running = await npmStart();
    const [service] = childPids(running.process.pid!);
    expect(service, "the service process under npm").to.be.a("number");
    await running.kill("SIGKILL");
    await eventually(
      async () => isAlive(service!),
      (alive) => !alive,
      5000,
    );
    await expectPortsFree();
  });
});

/** A POST whose body arrives in two halves, `delayMs` apart; answers the status and body. */
function slowRequest(url: string, body: string, headers: Record<string, string>, delayMs: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: "POST", agent: false, headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (text += chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body: text }));
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    const half = Math.floor(body.length / 2);
    request.write(body.slice(0, half));
    setTimeout(() => request.end(body.slice(half)), delayMs);
  });
}
