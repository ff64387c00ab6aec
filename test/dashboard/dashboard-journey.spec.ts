// The whole sandbox journey in the console, in Chromium, as a new integrator walks it: an endpoint added, a user
// through KYC and a deposit, the overview's money equal to the API's wallets, a transaction's timeline, a
// withdrawal made, pending transactions completed and failed, a delivery's request and response, "Retry now"
// delivering at once, and the live SMS outbox verifying a live user. With SVC_WRITE_SCREENSHOTS=1 it writes the
// screenshots docs/dashboard.md shows.
import { expect } from "chai";
import type { Page } from "playwright-core";
import { balanceOf } from "../money/support.ts";
import { uniquePhone } from "../support/phones.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { WebhookReceiver } from "../webhooks/support/receiver.ts";
import { type Chromium, clickAndWait, launchChromium, reloadUntil as reloadPageUntil, screenshot, seriousViolations, signInWith } from "./browser.ts";

describe("the sandbox journey in the console", function () {
  this.timeout(240_000);
  let service: TestService;
  let receiver: WebhookReceiver;
  let chromium: Chromium | null = null;
  let page: Page;
  /** Phones whose user's first event request the receiver answers 500 (then 200). */
  const failFirst = new Set<string>();

  before(async function () {
    chromium = await launchChromium();
    if (!chromium) this.skip(); // no chromium here; .ci/run installs it
    page = chromium.page;
    // The default retry schedule: a failed attempt waits a minute, so only "Retry now" delivers it within the test.
    service = await startTestService();
    receiver = await WebhookReceiver.start((_req, res, received) => {
      if (failFirst.delete(received.body?.data?.object?.phone)) {
        res.writeHead(500, { "content-type": "text/plain" }).end("try later");
        return;
      }
      res.writeHead(200, { "content-type": "application/json", "x-receiver": "journey" }).end('{"received":true}');
    });
  });
  after(async () => {
    await chromium?.close();
    await receiver?.close();
    await service?.stop();
  });

  async function go(pathname: string): Promise<void> {
    await page.goto(service.baseUrl + pathname);
    expect(await seriousViolations(page), pathname).to.deep.equal([]);
  }

  function reloadUntil(selector: string): Promise<void> {
    return reloadPageUntil(page, selector);
  }

  async function signIn(credential: string): Promise<void> {
    await signInWith(page, service.baseUrl, credential);
    expect(new URL(page.url()).pathname).to.equal("/dashboard");
  }

  let endpointPath = "";
  let userId = "";
  let userPath = "";

  it("signs in with the sandbox key and adds an endpoint (its secret shown once)", async () => {
    await signIn(service.sandboxKey);
    await go("/dashboard/webhooks");
    await page.fill("#n-url", receiver.url());
    await page.fill("#n-description", "My backend");
    await clickAndWait(page, "form[aria-label='Add an endpoint'] button");
    expect(await page.textContent(".secret-value")).to.match(/^whsec_/);
    endpointPath = (await page.getAttribute("form[aria-label='Edit endpoint']", "action"))!;
  });

  it("takes a user created by the API through KYC and a deposit from the user's page", async () => {
    const phone = uniquePhone();
    const created = await service.request("POST", "/v1/users", { body: { phone } });
    userId = created.body.id;
    userPath = `/dashboard/users/${userId}`;
    await go("/dashboard/users");
    await page.fill("#f-phone", phone);
    await page.click("form[data-filter] button[type=submit]");
    await page.waitForURL((url) => url.searchParams.get("phone") === phone);
    await page.locator(`#results a[href="${userPath}"]`).waitFor();
    await clickAndWait(page, `#results a[href="${userPath}"]`);

    await clickAndWait(page, "form[action$='/kyc-sessions'] button");
    await clickAndWait(page, "form[action$='/submit'] button");
    await clickAndWait(page, "form[action$='/approve'] button");
    expect(await page.textContent(".kyc-status")).to.include("approved");

    await go(userPath);
    await reloadUntil("tr.wallet .tag-ready");
    await page.fill("#d-amount", "120.00");
    await page.fill("#d-after", "0");
    await clickAndWait(page, "form[aria-label='Simulate a deposit'] button");
    await reloadUntil("tr.transaction[data-type='deposit'] .tag-completed");
    expect(await page.textContent("tr.wallet .balance-available")).to.equal("120.00");
    await screenshot(page, "user.png");
  });

  it("shows on the overview the money the API's wallets hold", async () => {
    await go("/dashboard");
    const available = Number((await page.textContent(".money-available"))!.replaceAll(",", ""));
    expect(available).to.equal((await balanceOf(service, userId)).available_usd);
    expect(available).to.equal(120);
    await screenshot(page, "overview.png");
  });

  it("opens a transaction's timeline from the user's page", async () => {
    await go(userPath);
    await clickAndWait(page, "tr.transaction[data-type='deposit'] a");
    expect(await page.textContent("h1")).to.match(/txn_/);
    await reloadUntil("ol.timeline li:has-text('transaction.completed')");
    expect(await page.textContent("ol.timeline")).to.include("Created");
    await screenshot(page, "transaction.png");
  });

  it("makes a withdrawal, and completes and fails pending deposits (sandbox actions)", async () => {
    await go(userPath);
    await page.fill("#w-amount", "20.00");
    await page.fill("#w-description", "Rent");
    await clickAndWait(page, "form[aria-label='Make a withdrawal'] button");
    expect(new URL(page.url()).pathname).to.match(/^\/dashboard\/transactions\/txn_/);
    await reloadUntil(".transaction-status .tag-completed");
    // Its events follow the state change through the outbox.
    await reloadUntil("ol.timeline li:has-text('withdrawal.completed')");

    for (const outcome of ["completed", "failed"] as const) {
      await go(userPath);
      await page.fill("#d-amount", "5.00");
      await page.fill("#d-after", "3600");
      await clickAndWait(page, "form[aria-label='Simulate a deposit'] button");
      const transactionId = new URL(page.url()).hash.slice(1);
      await go(`/dashboard/transactions/${transactionId}`);
      if (outcome === "completed") {
        await clickAndWait(page, "form[action$='/complete'] button");
      } else {
        await page.fill("#t-failure", "card_declined");
        await clickAndWait(page, "form[action$='/fail'] button");
      }
      expect(await page.textContent(".transaction-status")).to.include(outcome);
      expect((await service.request("GET", `/v1/transactions/${transactionId}`)).body.status).to.equal(outcome);
    }
    expect((await balanceOf(service, userId)).available_usd).to.equal(105);
  });

  it("shows a delivery's request as signed and the receiver's response", async () => {
    await go(endpointPath);
    await reloadUntil("tr.delivery[data-event-type='transaction.completed'] .tag-succeeded");
    const deliveryLink = page.locator("tr.delivery[data-event-type='transaction.completed'] a[href*='/deliveries/']").first();
    await Promise.all([page.waitForNavigation(), deliveryLink.click()]);
    expect(await seriousViolations(page)).to.deep.equal([]);
    const eventId = (await page.textContent("dl.facts a[href^='/dashboard/events/'] code"))!;
    const sent = receiver.forEvent(eventId)[0]!;
    expect(await page.textContent(".attempt pre[aria-label='Request body']")).to.equal(sent.rawBody);
    expect(await page.textContent(".attempt pre[aria-label='Response body']")).to.equal('{"received":true}');
    expect(await page.textContent(".attempt .response-status")).to.equal("200");
    expect(await page.textContent(".attempt dl[aria-label='Response headers']"))
      .to.include("x-receiver")
      .and.include("journey");
    await screenshot(page, "delivery.png", { fullPage: true });
  });

  it('delivers a pending delivery at once with "Retry now"', async () => {
    const phone = uniquePhone();
    failFirst.add(phone);
    const created = await service.request("POST", "/v1/users", { body: { phone } });
    const events = await service.request("GET", "/v1/events?type=user.created&limit=100");
    const eventId = events.body.data.find((e: any) => e.data.object.id === created.body.id).id;
    const row = `tr.delivery[data-event-type='user.created']:has(a[href='/dashboard/events/${eventId}'])`;
    await go(endpointPath);
    // Failed once, its next attempt a minute away.
    await reloadUntil(`${row} .tag-pending`);
    expect(receiver.forEvent(eventId)).to.have.length(1);
    await screenshot(page, "endpoint-deliveries.png", { fullPage: true });
    const retried = Date.now();
    await clickAndWait(page, `${row} form[action$='/retry'] button`);
    expect(await page.textContent(".flash-success")).to.include("Delivery retried");
    await receiver.waitUntil(() => receiver.forEvent(eventId).length === 2, 15_000);
    expect(Date.now() - retried).to.be.below(30_000);
    await reloadUntil(`${row} .tag-succeeded`);
  });

  it("verifies a live user with the code the live SMS outbox shows", async () => {
    await clickAndWait(page, "form.sign-out button");
    await signIn(service.liveKey);
    const user = await service.request("POST", "/v1/users", { key: service.liveKey, body: { phone: uniquePhone() } });
    expect((await service.request("POST", `/v1/users/${user.body.id}/verification`, { key: service.liveKey })).status).to.equal(200);
    await go("/dashboard/sms");
    const code = /Your verification code is (\d{6})\./.exec((await page.textContent("main"))!)?.[1];
    expect(code).to.be.a("string");
    await screenshot(page, "sms-outbox.png");
    const checked = await service.request("POST", `/v1/users/${user.body.id}/verification/check`, { key: service.liveKey, body: { code } });
    expect(checked.status, checked.text).to.equal(200);
    expect((await service.request("GET", `/v1/users/${user.body.id}`, { key: service.liveKey })).body.verified).to.equal(true);
  });
});
