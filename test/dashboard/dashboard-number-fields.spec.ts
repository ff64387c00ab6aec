// The consoles' number fields read decimal literals only, as typed: a plain decimal (no exponent) where the field is
// an amount, a whole number where it is a count; "0x10", "0b11", "0o7", " 5", "1e2", "+5" and ".5", which Number()
// would read, are 422 validation_error naming the field, shown on the page, and nothing is done.
import { expect } from "chai";
import { approvedUser } from "../money/support.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { DashboardClient } from "./support.ts";

describe("dashboard number fields: decimal literals only", function () {
  this.timeout(30_000);
  let service: TestService;

  before(async () => {
    service = await startTestService();
  });
  after(async () => {
    await service?.stop();
  });

  const transactionsOf = (userId: string) => service.database.db.collection("transactions").find({ user_id: userId }).toArray();

  it("simulate a deposit: amounts and the delay that are no decimal literal are refused and shown, and no deposit is made", async () => {
    const userId = await approvedUser(service);
    const client = new DashboardClient(service);
    await client.signIn(service.sandboxKey);
    const userPage = `/dashboard/users/${userId}`;
    const refusals: [Record<string, string>, string][] = [];
    for (const text of ["0x10", "0b11", "0o7", " 5", "5 ", "1e2", "+5", ".5", "5.", "010", "\uff15", "ten"]) {
      refusals.push([{ amount_usd: text }, "amount_usd"]);
      refusals.push([{ amount_usd: "10", fee_usd: text }, "fee_usd"]);
      refusals.push([{ amount_usd: "10", complete_after_seconds: text }, "complete_after_seconds"]);
    }
    refusals.push([{ amount_usd: "10", complete_after_seconds: "1.5" }, "complete_after_seconds"]);
    for (const [form, param] of refusals) {
      const answer = await client.post(userPage, `${userPage}/deposits`, { fiat_currency: "USD", ...form });
      expect(answer.status, JSON.stringify(form)).to.equal(303);
      expect(answer.location).to.equal(userPage);
      expect((await client.get(userPage)).text, JSON.stringify(form)).to.include(`(validation_error) [${param}]`);
    }
    expect(await transactionsOf(userId)).to.deep.equal([]);

    // Plain decimals and whole numbers are read as written (the service's own rules still apply).
    const made = await client.post(userPage, `${userPage}/deposits`, {
      amount_usd: "16.50",
      fee_usd: "0.5",
      fiat_currency: "USD",
      complete_after_seconds: "3600",
    });
    expect(made.location?.startsWith(userPage), String(made.location)).to.equal(true);
    expect((await client.get(userPage)).text).to.include("Deposit txn_");
    const [deposit] = await transactionsOf(userId);
    expect(deposit).to.include({ amount_cents: 1650, fee_cents: 50, type: "deposit" });
  });

  it("rotate a webhook secret: grace_period_hours is a whole number or empty (the API's default); the rest changes nothing", async () => {
    const created = await service.request("POST", "/v1/webhook-endpoints", { body: { url: "https://example.com/number-fields" } });
    expect(created.status, created.text).to.equal(201);
    const endpointPage = `/dashboard/webhooks/${created.body.id}`;
    const client = new DashboardClient(service);
    await client.signIn(service.sandboxKey);
    for (const text of ["0x10", " 5", "1e1", "2.5", "-"]) {
      const answer = await client.post(endpointPage, `${endpointPage}/rotate`, { grace_period_hours: text });
      expect(answer.status, text).to.equal(303);
      expect((await client.get(endpointPage)).text, text).to.include("(validation_error) [grace_period_hours]");
    }
    const unchanged = await service.request("GET", `/v1/webhook-endpoints/${created.body.id}`);
    expect(unchanged.body.previous_secret_expires_at).to.equal(null);
    const rotated = await client.post(endpointPage, `${endpointPage}/rotate`, { grace_period_hours: "" });
    expect(rotated.status).to.equal(200);
    const after = await service.request("GET", `/v1/webhook-endpoints/${created.body.id}`);
    const graceMs = Date.parse(after.body.previous_secret_expires_at) - Date.now();
    expect(graceMs).to.be.within(23 * 3600_000, 24 * 3600_000);
  });

  it("operator console: rate_limit and min_age are whole numbers; anything else is refused and nothing is issued or published", async () => {
    const client = new DashboardClient(service);
    await client.signIn(service.adminToken);
    const projectPage = `/dashboard/operator/projects/${service.projectId}`;
    const keysBefore = await service.database.db.collection("api_keys").countDocuments({});
    for (const text of ["0x10", "0b11", "0o7", " 5", "1e2", "60.5"]) {
      const key = await client.post(projectPage, `${projectPage}/keys`, { livemode: "false", rate_limit: text });
      expect(key.status, text).to.equal(303);
      expect((await client.get(projectPage)).text, text).to.include("(validation_error) [rate_limit]");
      const flow = await client.post(projectPage, `${projectPage}/signup-flow`, { livemode: "false", min_age: text });
      expect(flow.status, text).to.equal(303);
      expect((await client.get(projectPage)).text, text).to.include("(validation_error) [min_age]");
    }
    expect(await service.database.db.collection("api_keys").countDocuments({})).to.equal(keysBefore);
    const config = await service.request("GET", "/v1/signup-config");
    expect(config.body.min_age ?? null).to.equal(null);
  });
});
