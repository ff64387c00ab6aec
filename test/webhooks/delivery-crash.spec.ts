// At-least-once across a crash: the service runs as its own process (`src/main.ts`) over a database process;
// it is killed with SIGKILL while a burst of deliveries is in flight, restarted, and every event logged must
// then reach the receiver.
import { expect } from "chai";
import { uniquePhone } from "../support/phones.ts";
import { freePort, startDatabaseProcess, startServiceProcess, type RunningProcess } from "../support/processes.ts";
import { WebhookReceiver } from "./support/receiver.ts";

const SANDBOX_KEY = "svc_test_CrashTestSandboxKey0123456789";
const ADMIN_TOKEN = "adm_crash_test_token";
const BURST = 120;

describe("webhook delivery across a crash (SIGKILL)", function () {
  this.timeout(60_000);
  let database: RunningProcess & { uri: string };
  let service: RunningProcess | null = null;
  let receiver: WebhookReceiver;
  let serviceEnv: Record<string, string>;
  let baseUrl = "";
  const answered = new Set<string>();

  before(async () => {
    database = await startDatabaseProcess();
    const httpPort = await freePort();
    baseUrl = `http://127.0.0.1:${httpPort}`;
    serviceEnv = {
      MONGODB_URI: `${database.uri.replace(/\/$/, "")}/svc_crash`,
      PORT: String(httpPort),
      GRPC_PORT: String(await freePort()),
      SVC_BOOTSTRAP: "1",
      SVC_SANDBOX_KEY: SANDBOX_KEY,
      SVC_ADMIN_TOKEN: ADMIN_TOKEN,
      SVC_WEBHOOK_TIMEOUT_MS: "1500",
      SVC_WEBHOOK_RETRY_SCHEDULE: "100ms,100ms,100ms,100ms,100ms,100ms",
    };
    // Slow to answer, so that much of the burst is still unanswered when the service dies. A delivery counts as
    // done only once its answer went out: one cut off by the kill must be sent again.
    receiver = await WebhookReceiver.start((_req, res, received) => {
      res.on("finish", () => answered.add(received.body.id));
      setTimeout(
        () => {
          if (!res.destroyed) res.end("ok");
        },
        200 + Math.random() * 800,
      );
    });
  });
  after(async () => {
    await service?.kill("SIGKILL");
    await database.kill("SIGTERM");
    await receiver.close();
  });

  const startService = async () => {
    const { MONGODB_URI, ...env } = serviceEnv;
    service = await startServiceProcess(MONGODB_URI!, env);
  };
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(baseUrl + path, {
      method,
      headers: { authorization: `Bearer ${SANDBOX_KEY}`, "content-type": "application/json" },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  it("delivers every event at least once after the worker is killed mid-burst and restarted", async () => {
    await startService();
    expect((await call("POST", "/v1/webhook-endpoints", { url: receiver.url("/crash") })).status).to.equal(201);
    const created = await Promise.all(Array.from({ length: BURST }, () => call("POST", "/v1/users", { phone: uniquePhone() })));
    expect(created.every((r) => r.status === 201)).to.equal(true);
    await receiver.waitUntil(() => answered.size >= BURST / 4, 10_000);
    await service!.kill("SIGKILL");
    service = null;
    expect(answered.size, "deliveries still unanswered at the kill").to.be.below(BURST);

    await startService();
    const eventIds: string[] = [];
    let cursor = "";
    for (;;) {
      const page = await call("GET", `/v1/events?type=user.created&limit=100${cursor}`);
      eventIds.push(...page.body.data.map((e: any) => e.id));
      if (!page.body.has_more) break;
      cursor = `&starting_after=${eventIds.at(-1)}`;
    }
    expect(eventIds).to.have.length(BURST);
    await receiver.waitUntil(() => eventIds.every((id) => answered.has(id)), 20_000);
  });
});
