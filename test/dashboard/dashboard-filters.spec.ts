// The console's filters in Chromium, with the script and without it. With it, a filter swaps the list in without
// loading the page (a value set on the window survives), the address follows, and Back shows the earlier list
// with its filter values; no CSP violation. Without it, the same forms and links load the filtered page.
import { expect } from "chai";
import type { Page } from "playwright-core";
import { uniquePhone } from "../support/phones.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { type Chromium, clickAndWait, launchChromium, signInWith } from "./browser.ts";

async function createUser(service: TestService): Promise<{ id: string; phone: string }> {
  const created = await service.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
  expect(created.status, created.text).to.equal(201);
  return { id: created.body.id, phone: created.body.phone };
}

async function signIn(page: Page, service: TestService): Promise<void> {
  await signInWith(page, service.baseUrl, service.sandboxKey);
  expect(new URL(page.url()).pathname).to.equal("/dashboard");
}

/** The user ids the users list shows. */
function listedUsers(page: Page): Promise<string[]> {
  return page.locator("#results tbody tr td:first-child code").allTextContents();
}

/** Polls `condition` until it holds (the page's CSP forbids the string evaluation waitForFunction uses). */
async function until(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("console filters", function () {
  this.timeout(60_000);
  let service: TestService;
  let first: { id: string; phone: string };
  let second: { id: string; phone: string };
  let endpointId: string;

  before(async () => {
    service = await startTestService();
    first = await createUser(service);
    second = await createUser(service);
    const endpoint = await service.request("POST", "/v1/webhook-endpoints", { body: { url: "https://hooks.example.com/filters" } });
    endpointId = endpoint.body.id;
  });
  after(async () => {
    await service?.stop();
  });

  describe("with JavaScript", () => {
    let chromium: Chromium | null = null;
    let page: Page;
    const cspViolations: string[] = [];

    before(async function () {
      chromium = await launchChromium();
      if (!chromium) this.skip(); // no chromium here; .ci/run installs it
      page = chromium.page;
      page.on("console", (message) => {
        if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
      });
      await signIn(page, service);
    });
    after(async () => {
      await chromium?.close();
    });

    /** Marks this document: a full load would lose the mark. */
    async function markDocument(): Promise<void> {
      await page.evaluate("window.svcSameDocument = true");
    }
    async function sameDocument(): Promise<boolean> {
      return (await page.evaluate("window.svcSameDocument === true")) as boolean;
    }

    it("filters users in place, keeps the address in sync, and Back shows the earlier list", async () => {
      await page.goto(`${service.baseUrl}/dashboard/users`);
      expect(await listedUsers(page)).to.include.members([first.id, second.id]);
      await markDocument();

      await page.fill("#f-phone", first.phone);
      await page.click("form[data-filter] button[type=submit]");
      await page.waitForURL((url) => url.searchParams.get("phone") === first.phone);
      await until(async () => (await listedUsers(page)).length === 1);
      expect(await listedUsers(page)).to.deep.equal([first.id]);
      expect(await sameDocument()).to.equal(true);
      expect(await page.title()).to.include("Users");

      await page.goBack();
      await page.waitForURL((url) => url.pathname === "/dashboard/users" && url.search === "");
      await until(async () => (await listedUsers(page)).length >= 2);
      expect(await listedUsers(page)).to.include.members([first.id, second.id]);
      expect(await page.inputValue("#f-phone")).to.equal("");
      expect(await sameDocument()).to.equal(true);

      await page.goForward();
      await until(async () => (await listedUsers(page)).length === 1);
      expect(await listedUsers(page)).to.deep.equal([first.id]);
      expect(await page.inputValue("#f-phone")).to.equal(first.phone);
      expect(await sameDocument()).to.equal(true);
    });

    it("filters events by type, an endpoint's deliveries by status and the request log by source in place", async () => {
      await page.goto(`${service.baseUrl}/dashboard/events`);
      expect(await page.locator("#results tbody tr").count()).to.be.at.least(2);
      await markDocument();
      await page.selectOption("#f-type", "kyc.approved");
      await page.click("form[data-filter] button[type=submit]");
      await page.waitForURL((url) => url.searchParams.get("type") === "kyc.approved");
      await page.waitForSelector("#results p.empty");
      expect(await page.textContent("#results")).to.include("No event matches.");
      expect(await sameDocument()).to.equal(true);

      await page.goto(`${service.baseUrl}/dashboard/webhooks/${endpointId}`);
      await markDocument();
      await page.click("#results a[href$='?status=failed']");
      await page.waitForURL((url) => url.searchParams.get("status") === "failed");
      await page.waitForSelector("#results a[href$='?status=failed'][aria-current='true']");
      expect(await sameDocument()).to.equal(true);

      // The request log: the calls made through the REST door only.
      await page.goto(`${service.baseUrl}/dashboard/logs`);
      await markDocument();
      await page.selectOption("#f-source", "rest");
      await page.click("form[data-filter] button[type=submit]");
      await page.waitForURL((url) => url.searchParams.get("source") === "rest");
      await until(async () => {
        const sources = await page.locator("#results tr.request-log td:nth-child(4)").allTextContents();
        return sources.length > 0 && sources.every((source) => source === "rest");
      });
      expect(await sameDocument()).to.equal(true);
      expect(cspViolations).to.deep.equal([]);
    });
  });

  describe("without JavaScript", () => {
    let chromium: Chromium | null = null;
    let page: Page;

    before(async function () {
      chromium = await launchChromium({ javaScriptEnabled: false });
      if (!chromium) this.skip(); // no chromium here; .ci/run installs it
      page = chromium.page;
      await signIn(page, service);
    });
    after(async () => {
      await chromium?.close();
    });

    it("submits the filter form as a page load and shows the filtered list", async () => {
      await page.goto(`${service.baseUrl}/dashboard/users`);
      await page.fill("#f-phone", second.phone);
      await clickAndWait(page, "form[data-filter] button[type=submit]");
      expect(new URL(page.url()).searchParams.get("phone")).to.equal(second.phone);
      expect(await listedUsers(page)).to.deep.equal([second.id]);
      expect(await page.inputValue("#f-phone")).to.equal(second.phone);

      await page.goto(`${service.baseUrl}/dashboard/webhooks/${endpointId}`);
      await clickAndWait(page, "#results a[href$='?status=pending']");
      expect(new URL(page.url()).searchParams.get("status")).to.equal("pending");
    });
  });
});
