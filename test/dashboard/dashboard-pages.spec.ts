// Details of the project console's pages: the event-type filter offers the types, the rotate form takes the API's
// range, Disable is not styled as a destructive action, the icon is served, and a simulated deposit in another
// currency takes its fiat amount.
import { expect } from "chai";
import { EVENT_TYPES } from "../../src/domain/event-types.ts";
import { MAX_GRACE_PERIOD_HOURS } from "../../src/domain/webhook-endpoint-rules.ts";
import { approvedUser } from "../money/support.ts";
import type { TestService } from "../support/test-service.ts";
import { csrfOf, type DashboardClient, signedInConsole } from "./support.ts";

describe("project console pages", function () {
  this.timeout(30_000);
  let service: TestService;
  let client: DashboardClient;
  signedInConsole((started, signedIn) => {
    service = started;
    client = signedIn;
  });

  it("offers every event type in the events filter, the chosen one selected", async () => {
    const page = await client.get("/dashboard/events?type=user.created");
    expect(page.status).to.equal(200);
    for (const type of EVENT_TYPES) expect(page.text).to.include(`<option value="${type}"`);
    expect(page.text).to.include('<option value="user.created" selected>');
  });

  it("rotates with the API's grace range, styles Disable as cautious and Delete as destructive", async () => {
    const created = await service.request("POST", "/v1/webhook-endpoints", { body: { url: "https://hooks.example.com/pages" } });
    const page = await client.get(`/dashboard/webhooks/${created.body.id}`);
    expect(page.text).to.include(`(0 to ${MAX_GRACE_PERIOD_HOURS})`).and.include(`max="${MAX_GRACE_PERIOD_HOURS}"`);
    expect(page.text).to.match(/<button type="submit" class="caution">Disable<\/button>/);
    expect(page.text).to.match(/<button type="submit" class="danger">Delete endpoint<\/button>/);
    const rotated = await client.request("POST", `/dashboard/webhooks/${created.body.id}/rotate`, {
      _csrf: csrfOf(page.text),
      grace_period_hours: "100",
    });
    expect(rotated.status).to.equal(200);
    expect(rotated.text).to.include("whsec_");
  });

  it("serves the icon every page links", async () => {
    const page = await client.get("/dashboard");
    expect(page.text).to.include('<link rel="icon" href="/dashboard/assets/favicon.svg"');
    const icon = await client.get("/dashboard/assets/favicon.svg");
    expect(icon.status).to.equal(200);
    expect(icon.headers.get("content-type")).to.include("image/svg+xml");
    expect(icon.text).to.include("<svg");
  });

  it("simulates a deposit in another currency with its fiat amount", async () => {
    const userId = await approvedUser(service);
    const page = await client.get(`/dashboard/users/${userId}`);
    const answer = await client.request("POST", `/dashboard/users/${userId}/deposits`, {
      _csrf: csrfOf(page.text),
      amount_usd: "10.00",
      fiat_currency: "EUR",
      fiat_amount: "9.255",
      complete_after_seconds: "3600",
    });
    expect(answer.status).to.equal(303);
    const transactionId = answer.location!.split("#")[1];
    const transaction = await service.request("GET", `/v1/transactions/${transactionId}`);
    expect(transaction.body).to.include({ fiat_currency: "EUR", fiat_amount: 9.26, amount_usd: 10 });
  });
});

describe("project console: a user's page", function () {
  this.timeout(30_000);
  let service: TestService;
  let client: DashboardClient;
  signedInConsole((started, signedIn) => {
    service = started;
    client = signedIn;
  });

  it("leads with who the user is (phone, verification, KYC, suspension, wallet balance), the raw JSON behind a toggle", async () => {
    const userId = await approvedUser(service);
    const user = (await service.request("GET", `/v1/users/${userId}`)).body;
    const page = await client.get(`/dashboard/users/${userId}`);
    const facts = page.text.indexOf('<dl class="facts user-facts">');
    expect(page.status, page.text.slice(0, 2000)).to.equal(200);
    expect(facts).to.be.greaterThan(0);
    expect(facts).to.be.below(page.text.indexOf("<h2>Wallets</h2>"));
    const dl = page.text.slice(facts, page.text.indexOf("</dl>", facts));
    expect(dl).to.include(user.phone).and.include("approved").and.include('<span class="user-available">0.00</span> USD available');
    expect(page.text.indexOf("<details")).to.be.greaterThan(page.text.indexOf("<h2>Transactions</h2>"));
    expect(page.text).to.match(/<details class="card"><summary>Raw JSON: user and profile<\/summary><pre class="json"/);
  });
});
