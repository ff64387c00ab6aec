// `svc listen` and `svc trigger` as a developer runs them (the package's bin, in child processes) against a
// service on a local port: every event forwarded once, signed so that the printed secret verifies it with Svc's
// verify helper and with Stripe's SDK, each trigger type arriving, and the service restarting under the CLI
// without an event lost or repeated.
import { expect } from "chai";
import Stripe from "stripe";
import { listenSigningSecret } from "../../src/cli/listen-secret.ts";
import { TRIGGERS } from "../../src/cli/trigger.ts";
import { verifyWebhookSignature } from "../../src/webhooks/verify-signature.ts";
import { uniquePhone } from "../support/phones.ts";
import { compiledEntry, freePort, type RunningProcess, runProcess, startProcess } from "../support/processes.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { type ReceivedWebhook, WebhookReceiver } from "../webhooks/support/receiver.ts";
import { approvedUser } from "../money/support.ts";

const SVC = [compiledEntry("src/cli/svc.ts")];
const READY = /^Ready! Your webhook signing secret is (whsec_[0-9A-Za-z]{32}) \(\^C to quit\)$/;

describe("svc listen and svc trigger", function () {
  // Every CLI run starts node and tsx: seconds each on a loaded machine.
  this.timeout(240_000);
  let svc: TestService;
  let port: number;
  let receiver: WebhookReceiver;
  /** The project's webhook endpoint (for webhook.test), apart from what listen forwards. */
  let endpointReceiver: WebhookReceiver;
  let endpointId: string;
  let listen: RunningProcess | null = null;
  let secret: string;
  let env: Record<string, string>;

  before(async () => {
    port = await freePort();
    svc = await startTestService({ httpPort: port });
    receiver = await WebhookReceiver.start();
    endpointReceiver = await WebhookReceiver.start();
    env = { SVC_API_KEY: svc.sandboxKey, SVC_URL: `http://127.0.0.1:${port}`, SVC_GRPC_URL: "" };
  });
  after(async () => {
    await listen?.kill();
    await receiver?.close();
    await endpointReceiver?.close();
    await svc?.stop();
  });

  /** What listen forwarded, in arrival order. */
  const forwarded = () => receiver.received;
  const forwardedIds = () => forwarded().map((r) => r.headers["svc-event-id"] as string);

  it("prints the key's stable secret and forwards each event, signed as a delivery (Svc's verifier and Stripe's SDK)", async () => {
    const started = await startProcess("node", [...SVC, "listen", "--forward-to", receiver.url("/listen")], { env, ready: READY, timeoutMs: 60_000 });
    listen = started.running;
    secret = started.match[1]!;
    expect(secret).to.equal(listenSigningSecret(svc.sandboxKey));

    const created = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
    await receiver.waitUntil(() => forwarded().some((r) => r.body.data.object.id === created.body.id), 20_000);
    const delivery = forwarded().find((r) => r.body.data.object.id === created.body.id)!;
    expect(delivery.headers["svc-event-type"]).to.equal("user.created");
    expect(delivery.headers["user-agent"]).to.equal("Svc-Webhooks/1.0");
    expect(delivery.headers["content-type"]).to.equal("application/json");
    expect(delivery.body.project_id).to.equal(svc.projectId);
    expect(delivery.body.created).to.equal(delivery.body.created_at);
    // The body is the event the log answers, plus `created` and `project_id`.
    const logged = await svc.request("GET", `/v1/events/${delivery.headers["svc-event-id"]}`);
    const { created: _created, project_id: _project, ...event } = delivery.body;
    expect(event).to.deep.equal(logged.body);
    expect(verifyWebhookSignature(delivery.rawBody, delivery.headers["svc-signature"], secret)).to.equal(true);
    const stripe = new Stripe("sk_test_unused");
    const parsed = stripe.webhooks.constructEvent(delivery.rawBody, delivery.headers["svc-signature"] as string, secret);
    expect(parsed.id).to.equal(delivery.headers["svc-event-id"]);
    // A wrong secret verifies nothing.
    expect(verifyWebhookSignature(delivery.rawBody, delivery.headers["svc-signature"], listenSigningSecret("svc_test_other"))).to.equal(false);

    const line = listen.output.find((l) => l.includes(`--> user.created [${delivery.headers["svc-event-id"]}]`));
    expect(line, listen.output.join("\n")).to.match(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {3}--> user\.created \[evt_/);
    await receiver.waitUntil(
      () => listen!.output.some((l) => l.includes(`<-- [200] POST ${receiver.url("/listen")} [${delivery.headers["svc-event-id"]}]`)),
      10_000,
    );
  });

  it("svc trigger makes each type it offers, and listen forwards it", async () => {
    // webhook.test is sent to an endpoint of the project.
    const endpoint = await svc.request("POST", "/v1/webhook-endpoints", { body: { url: endpointReceiver.url() } });
    expect(endpoint.status, endpoint.text).to.equal(201);
    endpointId = endpoint.body.id;
    for (const type of Object.keys(TRIGGERS)) {
      const before = forwarded().length;
      const run = await runProcess("node", [...SVC, "trigger", type], { env, timeoutMs: 60_000 });
      expect(run.code, `${type}: ${run.stdout}${run.stderr}`).to.equal(0);
      expect(run.stdout).to.include(`Trigger succeeded! Check svc listen (or the dashboard's live events) for ${type}.`);
      await receiver.waitUntil(
        () =>
          forwarded()
            .slice(before)
            .some((r) => r.headers["svc-event-type"] === type),
        20_000,
      );
    }
    for (const delivery of forwarded()) {
      expect(verifyWebhookSignature(delivery.rawBody, delivery.headers["svc-signature"], secret), delivery.rawBody).to.equal(true);
    }
  });

  it("forwards the bytes a delivery of the event sends: a deposit's amounts digit for digit", async () => {
    const user = await approvedUser(svc);
    const deposit = await svc.request("POST", `/v1/sandbox/users/${user}/deposits`, {
      body: { amount_usd: 1234.57, fee_usd: 0.29, fiat_currency: "KWD", fiat_amount: 12345678.901, complete_after_seconds: 3600 },
    });
    expect(deposit.status, deposit.text).to.equal(201);
    const isDeposit = (r: ReceivedWebhook) => r.body?.data?.object?.id === deposit.body.id;
    await receiver.waitUntil((all) => all.some(isDeposit), 20_000);
    await endpointReceiver.waitUntil((all) => all.some(isDeposit), 20_000);
    const sent = receiver.received.find(isDeposit)!.rawBody;
    expect(sent).to.equal(endpointReceiver.received.find(isDeposit)!.rawBody);
    for (const digits of ['"amount_usd":1234.57', '"fee_usd":0.29', '"fiat_amount":12345678.901']) expect(sent).to.include(digits);
    // So is every event both received: the endpoint's deliveries and what listen forwarded.
    let compared = 0;
    for (const delivery of endpointReceiver.received) {
      const same = receiver.forEvent(delivery.headers["svc-event-id"] as string)[0];
      if (!same) continue;
      expect(same.rawBody).to.equal(delivery.rawBody);
      compared += 1;
    }
    expect(compared).to.be.at.least(Object.keys(TRIGGERS).length);
  });

  it("svc events list, get and resend read the log and send an event to an endpoint again", async () => {
    const newest = (await svc.request("GET", "/v1/events?limit=2")).body.data as { id: string; type: string; created_at: string }[];
    const list = await runProcess("node", [...SVC, "events", "list", "--limit", "2"], { env, timeoutMs: 60_000 });
    expect(list.code, list.stderr).to.equal(0);
    expect(list.stdout.split("\n").slice(0, 2)).to.deep.equal(newest.map((e) => `${e.created_at}  ${e.id}  ${e.type}`));
    expect(list.stdout).to.include(`(more: svc events list --starting-after ${newest[1]!.id})`);
    const get = await runProcess("node", [...SVC, "events", "get", newest[0]!.id], { env, timeoutMs: 60_000 });
    expect(JSON.parse(get.stdout)).to.deep.equal((await svc.request("GET", `/v1/events/${newest[0]!.id}`)).body);

    const userCreated = (await svc.request("GET", "/v1/events?type=user.created&limit=1")).body.data[0].id as string;
    await endpointReceiver.waitUntil((all) => all.some((r) => r.headers["svc-event-id"] === userCreated), 20_000);
    const before = endpointReceiver.forEvent(userCreated).length;
    const resend = await runProcess("node", [...SVC, "events", "resend", userCreated, "--webhook-endpoint", endpointId], { env, timeoutMs: 60_000 });
    expect(resend.code, resend.stderr).to.equal(0);
    expect(resend.stdout).to.match(new RegExp(`^Resent ${userCreated} to ${endpointId}: delivery \\S+ is \\w+`));
    await endpointReceiver.waitUntil(() => endpointReceiver.forEvent(userCreated).length > before, 20_000);
    const unknown = await runProcess("node", [...SVC, "events", "get", "evt_00000000-0000-4000-8000-000000000000"], { env, timeoutMs: 60_000 });
    expect([unknown.code, unknown.stderr.trim()]).to.deep.equal([1, "svc: event_not_found: No event with this id."]);
  });

  it("resumes after the service restarts: every event of the log forwarded once", async () => {
    const before = await svc.request("GET", "/v1/events?limit=100");
    await svc.stop();
    // Written by another instance on the same database while the CLI's service is down.
    const other = await startTestService({ databaseUri: svc.databaseUri });
    for (let i = 0; i < 5; i++) {
      const made = await other.request("POST", "/v1/users", { key: svc.sandboxKey, body: { phone: uniquePhone() } });
      expect(made.status, made.text).to.equal(201);
    }
    await other.stop();
    svc = await startTestService({ databaseUri: svc.databaseUri, httpPort: port });
    for (let i = 0; i < 3; i++) await svc.request("POST", "/v1/users", { key: env.SVC_API_KEY!, body: { phone: uniquePhone() } });

    const log = await svc.request("GET", "/v1/events?limit=100", { key: env.SVC_API_KEY! });
    const all = (log.body.data as { id: string }[]).map((e) => e.id).reverse();
    expect(all.length).to.be.above((before.body.data as unknown[]).length + 7);
    await receiver
      .waitUntil(() => all.every((id) => forwardedIds().includes(id)), 60_000)
      .catch((error: Error) => expect.fail(`${error.message}\n${listen!.output.join("\n")}`));
    await new Promise((r) => setTimeout(r, 500));
    // The log's order, except that events logged in the same instant may come in the order they were written.
    expect(forwardedIds()).to.have.members(all);
    expect(new Set(forwardedIds()).size).to.equal(forwardedIds().length);
    expect(listen!.output.join("\n")).to.match(/reconnecting/);
  });

  it("prints the same secret on another run with the key, and one-line errors", async () => {
    await listen!.kill();
    listen = null;
    const again = await startProcess("node", [...SVC, "listen", "--forward-to", receiver.url("/listen")], { env, ready: READY, timeoutMs: 60_000 });
    await again.running.kill();
    expect(again.match[1]).to.equal(secret);

    const noKey = await runProcess("node", [...SVC, "listen", "--forward-to", receiver.url()], {
      env: { ...env, SVC_API_KEY: "" },
      timeoutMs: 60_000,
    });
    expect([noKey.code, noKey.stderr.trim()]).to.deep.equal([
      1,
      "svc: no API key: set SVC_API_KEY or pass --api-key (a svc_test_... key of your project)",
    ]);
    const down = await runProcess("node", [...SVC, "trigger", "user.created", "--url", `http://127.0.0.1:${await freePort()}`], {
      env,
      timeoutMs: 60_000,
    });
    expect(down.code).to.equal(1);
    expect(down.stderr.trim()).to.match(
      /^svc: cannot reach Svc at http:\/\/127\.0\.0\.1:\d+ \(.*ECONNREFUSED.*\); is it running\? \(set SVC_URL or --url\)$/,
    );
    const badUrl = await runProcess("node", [...SVC, "listen", "--forward-to", "localhost:3000"], { env, timeoutMs: 60_000 });
    expect(badUrl.code).to.equal(1);
    expect(badUrl.stderr.trim().split("\n")).to.have.length(1);
    const refusedKey = await runProcess("node", [...SVC, "events", "list", "--api-key", "svc_test_not_a_key"], { env, timeoutMs: 60_000 });
    expect([refusedKey.code, refusedKey.stderr.trim()]).to.deep.equal([1, "svc: invalid_api_key: The API key is unknown or malformed."]);
  });
});
