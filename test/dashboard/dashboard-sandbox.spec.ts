// The dashboard's sandbox tools over plain HTTP: the simulated KYC page a sandbox session's `url` opens (signed
// out: sign in, then back to it; `next` never leaves it), the services' own errors shown, and a live session
// refused by the API's own access check (sandbox_only), with nothing changed.
import { expect } from "chai";
import { startTestService, type TestService } from "../support/test-service.ts";
import { uniquePhone } from "../support/phones.ts";
import { csrfOf, DashboardClient } from "./support.ts";

describe("dashboard sandbox tools", () => {
  let service: TestService;

  before(async () => {
    service = await startTestService();
  });
  after(async () => {
    await service?.stop();
  });

  async function createUser(): Promise<string> {
    const created = await service.request("POST", "/v1/users", {
      body: { phone: uniquePhone() },
      headers: { "idempotency-key": crypto.randomUUID() },
    });
    expect(created.status).to.equal(201);
    return created.body.id;
  }

  async function createKycSession(userId: string): Promise<{ id: string; url: string }> {
    const created = await service.request("POST", `/v1/users/${userId}/kyc-sessions`, { headers: { "idempotency-key": crypto.randomUUID() } });
    expect(created.status).to.equal(201);
    return created.body;
  }

  it("opens a sandbox KYC session's url: signed out, sign in first and come back to it; a foreign next is ignored", async () => {
    const session = await createKycSession(await createUser());
    const pathname = new URL(session.url).pathname;
    expect(pathname).to.equal(`/dashboard/kyc/${session.id}`);
    const client = new DashboardClient(service);
    const first = await client.get(pathname);
    expect(first.status).to.equal(303);
    expect(first.location).to.equal(`/dashboard/sign-in?next=${encodeURIComponent(pathname)}`);
    const signIn = await client.get(first.location!);
    expect(signIn.text).to.include(`name="next" value="${pathname}"`);
    const answer = await client.request("POST", "/dashboard/sign-in", { _csrf: csrfOf(signIn.text), credential: service.sandboxKey, next: pathname });
    expect(answer.status).to.equal(303);
    expect(answer.location).to.equal(pathname);
    const kycPage = await client.get(pathname);
    expect(kycPage.status).to.equal(200);
    expect(kycPage.text).to.include("requires_input").and.include(`${pathname}/approve`);

    for (const next of ["https://example.com/", "//example.com/x", "/dashboard/../v1/users", "/dashboard/webhooks"]) {
      const other = new DashboardClient(service);
      const form = await other.get(`/dashboard/sign-in?next=${encodeURIComponent(next)}`);
      expect(form.text).not.to.include('name="next"');
      const signedIn = await other.request("POST", "/dashboard/sign-in", { _csrf: csrfOf(form.text), credential: service.sandboxKey, next });
      expect(signedIn.location).to.equal("/dashboard");
    }
  });

  it("rejects a session with a reason, and shows the services' own errors (a deposit without approved KYC: kyc_required)", async () => {
    const userId = await createUser();
    const client = new DashboardClient(service);
    await client.signIn(service.sandboxKey);
    const userPage = `/dashboard/users/${userId}`;
    const refused = await client.post(userPage, `${userPage}/deposits`, {
      amount_usd: "10",
      fee_usd: "0",
      fiat_currency: "USD",
      complete_after_seconds: "0",
    });
    expect(refused.status).to.equal(303);
    expect(refused.location).to.equal(userPage);
    expect((await client.get(userPage)).text).to.include("(kyc_required)");
    const noAmount = await client.post(userPage, `${userPage}/deposits`, { amount_usd: "ten" });
    expect(noAmount.location).to.equal(userPage);
    expect((await client.get(userPage)).text).to.include("(validation_error) [amount_usd]");

    const started = await client.post("/dashboard/sandbox", "/dashboard/sandbox/kyc-sessions", { user_id: userId });
    expect(started.location).to.match(/^\/dashboard\/kyc\/\w+$/);
    const rejected = await client.post(started.location!, `${started.location}/reject`, { reason: "Document <b>blurred</b>" });
    expect(rejected.location).to.equal(started.location);
    const kycPage = (await client.get(started.location!)).text;
    expect(kycPage).to.include("tag-rejected").and.include("Document &lt;b&gt;blurred&lt;/b&gt;");
    expect(kycPage).not.to.include(`${started.location}/approve`);
    const again = await client.post(started.location!, `${started.location}/approve`);
    expect(again.location).to.equal(started.location);
    expect((await client.get(started.location!)).text).to.include("(invalid_state)");
    const user = await service.request("GET", `/v1/users/${userId}`);
    expect(user.body.kyc_status).to.equal("rejected");
  });

  it("refuses the sandbox tools to a live session with the API's own sandbox_only, and changes nothing", async () => {
    const userId = await createUser();
    const session = await createKycSession(userId);
    const sandbox = new DashboardClient(service);
    await sandbox.signIn(service.sandboxKey);
    const csrfPage = await sandbox.get(`/dashboard/kyc/${session.id}`);
    const live = new DashboardClient(service);
    const signedIn = await live.signIn(service.liveKey);
    expect(signedIn.location).to.equal("/dashboard");
    const from = "/dashboard/webhooks";
    const approve = await live.post(from, `/dashboard/kyc/${session.id}/approve`);
    expect(approve.location).to.equal(`/dashboard/kyc/${session.id}`);
    const deposit = await live.post(from, `/dashboard/users/${userId}/deposits`, { amount_usd: "10" });
    expect(deposit.status).to.equal(303);
    const shown = await live.get(`/dashboard/users/${userId}`);
    expect(shown.text).to.include("(sandbox_only)");
    expect((await live.get("/dashboard/sandbox")).status).to.equal(422);
    // The sandbox session is not the live environment's: its page is 404 there.
    expect((await live.get(`/dashboard/kyc/${session.id}`)).status).to.equal(404);
    expect(csrfPage.status).to.equal(200);
    const after = await service.request("GET", `/v1/kyc-sessions/${session.id}`);
    expect(after.body.status).to.equal("requires_input");
  });

  it("creates webhook endpoints with the event types typed, and with every type when the field is left empty", async () => {
    const client = new DashboardClient(service);
    await client.signIn(service.sandboxKey);
    const from = "/dashboard/webhooks";
    const typed = await client.post(from, from, { url: "https://example.com/typed", event_types: "user.created, kyc.approved" });
    expect(typed.status).to.equal(200);
    const empty = await client.post(from, from, { url: "https://example.com/every", event_types: " " });
    expect(empty.status).to.equal(200);
    const list = await service.request("GET", "/v1/webhook-endpoints?limit=100");
    const typesOf = (url: string) => list.body.data.find((e: any) => e.url === url)?.event_types;
    expect(typesOf("https://example.com/typed")).to.deep.equal(["user.created", "kyc.approved"]);
    expect(typesOf("https://example.com/every")).to.deep.equal(["*"]);
  });
});
