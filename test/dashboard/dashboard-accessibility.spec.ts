// axe-core in Chromium over every kind of console page, each filled with real data: no serious or critical
// finding. The sandbox project console (overview, users, a user, a transaction, a KYC session, events, an event,
// endpoints, an endpoint with its deliveries, a delivery, logs, a log, live events, sandbox tools), the live one (overview, SMS
// outbox with a message), the operator console (organizations, an organization, a project with its API keys and
// settings), the sign-in page and a not-found page.
import { expect } from "chai";
import type { Page } from "playwright-core";
import { fund, approvedUser } from "../money/support.ts";
import { eventually } from "../support/eventually.ts";
import { uniquePhone } from "../support/phones.ts";
import { startTestService, TEST_ADMIN_TOKEN, type TestService } from "../support/test-service.ts";
import { WebhookReceiver } from "../webhooks/support/receiver.ts";
import { type Chromium, clickAndWait, launchChromium, seriousViolations, signInWith } from "./browser.ts";

describe("console accessibility: every page type passes axe-core", function () {
  this.timeout(180_000);
  let service: TestService;
  let receiver: WebhookReceiver;
  let chromium: Chromium | null = null;
  let page: Page;
  /** Findings by page, so one run reports every page at fault. */
  const findings: Record<string, string[]> = {};
  const visited: string[] = [];

  before(async function () {
    chromium = await launchChromium();
    if (!chromium) this.skip(); // no chromium here; .ci/run installs it
    page = chromium.page;
    service = await startTestService();
    receiver = await WebhookReceiver.start((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end('{"received":true}'));
  });
  after(async () => {
    await chromium?.close();
    await receiver?.close();
    await service?.stop();
  });

  async function check(kind: string, pathname: string, expectedStatus = 200): Promise<void> {
    const response = await page.goto(service.baseUrl + pathname);
    expect(response?.status(), `${kind} ${pathname}`).to.equal(expectedStatus);
    const violations = await seriousViolations(page);
    if (violations.length > 0) findings[`${kind} ${pathname}`] = violations;
    visited.push(kind);
  }

  function signIn(credential: string): Promise<void> {
    return signInWith(page, service.baseUrl, credential);
  }

  it("walks the sandbox project console", async () => {
    const userId = await approvedUser(service);
    await fund(service, userId, 12.5);
    const transactionId = (await service.request("GET", `/v1/users/${userId}/transactions`)).body.data[0].id;
    const kycUser = await service.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
    const session = await service.request("POST", `/v1/users/${kycUser.body.id}/kyc-sessions`, { body: {} });
    expect(session.status, session.text).to.equal(201);
    const endpoint = await service.request("POST", "/v1/webhook-endpoints", { body: { url: receiver.url(), description: "accessibility walk" } });
    await service.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
    const deliveries = await eventually(
      () => service.request("GET", `/v1/webhook-endpoints/${endpoint.body.id}/deliveries`),
      (r) => r.body.data.some((d: any) => d.last_attempt !== null),
      30_000,
    );
    const delivery = deliveries.body.data.find((d: any) => d.last_attempt !== null);
    const eventId = (await service.request("GET", "/v1/events?limit=1")).body.data[0].id;
    const logs = await eventually(
      () => service.request("GET", "/v1/request-logs?limit=1"),
      (r) => r.status === 200 && r.body.data.length > 0,
      10_000,
    );

    await check("sign-in", "/dashboard/sign-in");
    await signIn(service.sandboxKey);
    await check("overview", "/dashboard");
    await check("users", "/dashboard/users");
    await check("users filtered", `/dashboard/users?kyc_status=approved`);
    await check("user", `/dashboard/users/${userId}`);
    await check("transaction", `/dashboard/transactions/${transactionId}`);
    await check("KYC session", `/dashboard/kyc/${session.body.id}`);
    await check("events", "/dashboard/events");
    await check("event", `/dashboard/events/${eventId}`);
    await check("endpoints", "/dashboard/webhooks");
    await check("endpoint", `/dashboard/webhooks/${endpoint.body.id}`);
    await check("deliveries", `/dashboard/webhooks/${endpoint.body.id}?status=succeeded`);
    await check("delivery", `/dashboard/webhooks/${endpoint.body.id}/deliveries/${delivery.id}`);
    await check("logs", "/dashboard/logs");
    await check("log", `/dashboard/logs/${logs.body.data[0].id}`);
    await check("live events", "/dashboard/live-events");
    await check("sandbox tools", "/dashboard/sandbox");
    await check("not found", "/dashboard/users/no-such-user", 404);
  });

  it("walks the live project console with its SMS outbox", async () => {
    const user = await service.request("POST", "/v1/users", { key: service.liveKey, body: { phone: uniquePhone() } });
    expect((await service.request("POST", `/v1/users/${user.body.id}/verification`, { key: service.liveKey })).status).to.equal(200);
    await page.goto(`${service.baseUrl}/dashboard`);
    await clickAndWait(page, "form.sign-out button");
    await signIn(service.liveKey);
    await check("overview (live)", "/dashboard");
    await check("SMS outbox", "/dashboard/sms");
    expect(await page.textContent("main")).to.match(/Your verification code is \d{6}/);
  });

  it("walks the operator console: organizations, an organization, a project with its API keys and settings", async () => {
    await clickAndWait(page, "form.sign-out button");
    await signIn(TEST_ADMIN_TOKEN);
    await check("organizations", "/dashboard/operator");
    await check("organization", `/dashboard/operator/organizations/${service.organizationId}`);
    await check("project: API keys and settings", `/dashboard/operator/projects/${service.projectId}`);
    expect(await page.locator("tr.api-key").count()).to.be.greaterThan(0);
  });

  it("found no serious or critical violation on any page", () => {
    expect(visited).to.include.members(["overview", "users", "user", "transaction", "KYC session", "events", "event", "endpoints", "endpoint"]);
    expect(visited).to.include.members(["deliveries", "delivery", "SMS outbox", "organizations", "organization", "project: API keys and settings"]);
    expect(findings).to.deep.equal({});
  });
});
