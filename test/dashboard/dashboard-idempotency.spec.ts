// The dashboard's forms through the call pipeline: each form carries an Idempotency-Key drawn when its page is
// rendered, so posting the same form again (five at once, or one after another) shows the first result and makes
// one object, while a freshly loaded form is a new request. Its calls are rate limited as the session's key.
import { expect } from "chai";
import { approvedUser, fund } from "../money/support.ts";
import { uniquePhone } from "../support/phones.ts";
import { createKey } from "../support/tenancy.ts";
import { TEST_ADMIN_TOKEN, type TestService } from "../support/test-service.ts";
import { DashboardClient, formFields, signedInConsole } from "./support.ts";

describe("dashboard forms replay their first result", function () {
  this.timeout(30_000);
  let service: TestService;
  let client: DashboardClient;
  signedInConsole((started, signedIn) => {
    service = started;
    client = signedIn;
  });

  const depositsOf = (userId: string) => service.database.db.collection("transactions").countDocuments({ user_id: userId, type: "deposit" });

  it("posts the same deposit form 5 times at once: one deposit, every answer naming it", async () => {
    const userId = await approvedUser(service);
    await fund(service, userId, 1);
    const before = await depositsOf(userId);
    const action = `/dashboard/users/${userId}/deposits`;
    const form: Record<string, string> = {
      ...formFields((await client.get(`/dashboard/users/${userId}`)).text, action),
      amount_usd: "12.34",
      complete_after_seconds: "3600",
    };
    expect(form._idempotency_key).to.match(/^form_[A-Za-z0-9_-]{24}$/);

    const answers = await Promise.all(Array.from({ length: 5 }, () => client.request("POST", action, form)));
    expect(answers.map((a) => a.status)).to.deep.equal([303, 303, 303, 303, 303]);
    const locations = new Set(answers.map((a) => a.location));
    expect(locations.size, [...locations].join(" ")).to.equal(1);
    const location = answers[0]!.location!;
    expect(location).to.match(new RegExp(`^/dashboard/users/${userId}#txn_[A-Za-z0-9]{24}$`));
    expect(await depositsOf(userId)).to.equal(before + 1);

    // Back and resubmit, later: the same deposit again, with its notice.
    const again = await client.request("POST", action, form);
    expect(again.location).to.equal(location);
    const page = await client.get(`/dashboard/users/${userId}`);
    expect(page.text).to.include(`Deposit ${location.split("#")[1]} of 12.34 USD created`);
    expect(page.text).to.include(`id="${location.split("#")[1]}"`);
    expect(await depositsOf(userId)).to.equal(before + 1);

    // A freshly loaded form is a new request.
    const fresh: Record<string, string> = { ...formFields(page.text, action), amount_usd: "12.34", complete_after_seconds: "3600" };
    expect(fresh._idempotency_key).not.to.equal(form._idempotency_key);
    const second = await client.request("POST", action, fresh);
    expect(second.location).not.to.equal(location);
    expect(await depositsOf(userId)).to.equal(before + 2);
  });

  it("posts a KYC session form twice: the same session, not a second one", async () => {
    const created = await service.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
    const userId = created.body.id as string;
    const action = `/dashboard/users/${userId}/kyc-sessions`;
    const form = formFields((await client.get(`/dashboard/users/${userId}`)).text, action);
    const [first, second] = await Promise.all([client.request("POST", action, form), client.request("POST", action, form)]);
    expect(first!.location).to.match(/^\/dashboard\/kyc\/kyc_[A-Za-z0-9]{24}$/);
    expect(second!.location).to.equal(first!.location);
    const sessions = await service.request("GET", `/v1/users/${userId}/kyc-sessions`);
    expect(sessions.body.data).to.have.length(1);
  });

  it("posts the endpoint form twice: the second shows the first endpoint, not 'already exists'", async () => {
    const url = `https://hooks.example.com/dashboard-twice-${Date.now()}`;
    const form = { ...formFields((await client.get("/dashboard/webhooks")).text, "/dashboard/webhooks"), url };
    const first = await client.request("POST", "/dashboard/webhooks", form);
    expect(first.status, first.text.slice(0, 300)).to.equal(200);
    const endpointId = /\/dashboard\/webhooks\/([0-9a-f-]{36})/.exec(first.text)?.[1];
    expect(endpointId).to.be.a("string");
    const second = await client.request("POST", "/dashboard/webhooks", form);
    expect(second.status).to.equal(200);
    expect(second.text).to.include(endpointId!).and.not.include("already exists");
    const listed = await service.request("GET", "/v1/webhook-endpoints?limit=100");
    expect(listed.body.data.filter((e: { url: string }) => e.url === url)).to.have.length(1);
  });

  it("counts the console's calls against the session key's rate limit", async () => {
    const { secret } = await createKey(service, service.projectId, { rateLimit: 3 });
    const limited = new DashboardClient(service);
    expect((await limited.signIn(secret)).status).to.equal(303);
    const pages = [];
    for (let i = 0; i < 4; i++) pages.push(await limited.get("/dashboard/events"));
    expect(pages.map((p) => p.status)).to.deep.equal([200, 200, 200, 429]);
    expect(pages[3]!.text).to.include("rate_limit_exceeded");
  });

  it("posts the operator's key form twice: one key, the secret shown once", async () => {
    const operator = new DashboardClient(service);
    expect((await operator.signIn(TEST_ADMIN_TOKEN)).status).to.equal(303);
    const page = `/dashboard/operator/projects/${service.projectId}`;
    const action = `${page}/keys`;
    const form = { ...formFields((await operator.get(page)).text, action), livemode: "false" };
    const keysBefore = await service.database.db.collection("api_keys").countDocuments({ project_id: service.projectId });
    const first = await operator.request("POST", action, form);
    expect(first.text).to.match(/svc_test_[A-Za-z0-9]{24,}/);
    const second = await operator.request("POST", action, form);
    expect(second.status).to.equal(200);
    expect(second.text)
      .to.include("This form already created key")
      .and.not.match(/svc_test_[A-Za-z0-9]{24,}/);
    expect(await service.database.db.collection("api_keys").countDocuments({ project_id: service.projectId })).to.equal(keysBefore + 1);
  });
});
