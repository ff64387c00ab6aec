// The simulated SMS provider's outbox in the project console: a live user is verified on a development machine
// by reading the code the provider would have sent; only the session's project and environment's messages show.
import { expect } from "chai";
import { uniquePhone } from "../support/phones.ts";
import { createKey, createProject } from "../support/tenancy.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { DashboardClient } from "./support.ts";

describe("the console's SMS outbox (simulated provider)", function () {
  this.timeout(30_000);
  let service: TestService;
  before(async () => {
    service = await startTestService();
  });
  after(async () => {
    await service?.stop();
  });

  it("shows the live code the provider would have sent, so the live user can be verified; other tenants' messages stay out", async () => {
    const live = new DashboardClient(service);
    expect((await live.signIn(service.liveKey)).status).to.equal(303);
    const phone = uniquePhone();
    const user = await service.request("POST", "/v1/users", { key: service.liveKey, body: { phone } });
    expect(user.status).to.equal(201);
    expect((await service.request("POST", `/v1/users/${user.body.id}/verification`, { key: service.liveKey })).status).to.equal(200);

    // Another project's live user gets a message too: not shown to this session.
    const other = await createProject(service);
    const otherKey = (await createKey(service, other.projectId, { livemode: true })).secret;
    const otherPhone = uniquePhone();
    const otherUser = await service.request("POST", "/v1/users", { key: otherKey, body: { phone: otherPhone } });
    await service.request("POST", `/v1/users/${otherUser.body.id}/verification`, { key: otherKey });

    const overview = await live.get("/dashboard");
    expect(overview.text).to.include('href="/dashboard/sms"');
    const outbox = await live.get("/dashboard/sms");
    expect(outbox.status).to.equal(200);
    expect(outbox.text).to.include(phone).and.not.include(otherPhone);
    const code = /Your verification code is (\d{6})\./.exec(outbox.text)?.[1];
    expect(code, outbox.text).to.be.a("string");
    const checked = await service.request("POST", `/v1/users/${user.body.id}/verification/check`, { key: service.liveKey, body: { code } });
    expect(checked.status, JSON.stringify(checked.body)).to.equal(200);
    expect((await service.request("GET", `/v1/users/${user.body.id}`, { key: service.liveKey })).body.verified).to.equal(true);
  });
});

describe("the console with a real SMS provider", function () {
  this.timeout(30_000);
  let service: TestService;
  before(async () => {
    // Any provider but the simulated one: it exposes nothing it sent.
    service = await startTestService({ smsSender: { send: async () => {} } });
  });
  after(async () => {
    await service?.stop();
  });

  it("has no outbox in the navigation, and its page shows no message", async () => {
    const client = new DashboardClient(service);
    expect((await client.signIn(service.liveKey)).status).to.equal(303);
    const user = await service.request("POST", "/v1/users", { key: service.liveKey, body: { phone: uniquePhone() } });
    await service.request("POST", `/v1/users/${user.body.id}/verification`, { key: service.liveKey });
    expect((await client.get("/dashboard")).text).not.to.include('href="/dashboard/sms"');
    const page = await client.get("/dashboard/sms");
    expect(page.text).to.include("a real one").and.not.include("verification code");
  });
});
