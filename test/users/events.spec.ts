// user.created, user.suspended and user.unsuspended in the event log, and the log's list rules.
import { expect } from "chai";
import { expectError } from "../support/errors.ts";
import { uniquePhone } from "../support/phones.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

describe("users: events", () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  it("emits user.created with the User (never the profile) as data.object", async () => {
    const res = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone(), first_name: "Privata", email: "p@ii.example" } });
    const list = await svc.request("GET", "/v1/events?type=user.created&limit=1");
    expect(list.status).to.equal(200);
    const event = list.body.data[0];
    expect(event).to.include({ object: "event", type: "user.created", livemode: false });
    expect(event.id).to.match(/^evt_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(event.data.object).to.deep.equal(res.body);
    expect(JSON.stringify(event)).not.to.contain("Privata");
    expect(JSON.stringify(event)).not.to.contain("p@ii.example");
    const one = await svc.request("GET", `/v1/events/${event.id}`);
    expect(one.body).to.deep.equal(event);
  });

  it("suspension and its lifting emit user.suspended and user.unsuspended once each", async () => {
    const res = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
    const scope = { projectId: svc.projectId, livemode: false, userId: res.body.id };
    const suspended = await svc.admin.suspendUser(scope);
    expect(suspended.user!.suspended).to.equal(true);
    await svc.admin.suspendUser(scope); // already suspended: no second event
    expect((await svc.request("GET", `/v1/users/${res.body.id}`)).body.suspended).to.equal(true);
    await svc.admin.unsuspendUser(scope);
    const events = (await svc.request("GET", "/v1/events?limit=3")).body.data;
    expect(events.map((e: { type: string }) => e.type)).to.deep.equal(["user.unsuspended", "user.suspended", "user.created"]);
    expect(events[1].data.object).to.include({ id: res.body.id, suspended: true });
    expect(events[0].data.object).to.include({ id: res.body.id, suspended: false });
  });

  it("keeps environments apart and pages newest first with starting_after", async () => {
    await svc.request("POST", "/v1/users", { key: svc.liveKey, body: { phone: uniquePhone() } });
    const live = await svc.request("GET", "/v1/events?limit=100", { key: svc.liveKey });
    const sandbox = await svc.request("GET", "/v1/events?limit=100");
    expect(live.body.data.every((e: { livemode: boolean }) => e.livemode)).to.equal(true);
    expect(sandbox.body.data.every((e: { livemode: boolean }) => !e.livemode)).to.equal(true);
    const firstPage = await svc.request("GET", "/v1/events?limit=2");
    expect(firstPage.body.has_more).to.equal(true);
    const second = await svc.request("GET", `/v1/events?limit=2&starting_after=${firstPage.body.data[1].id}`);
    expect(second.body.data[0].id).to.equal(sandbox.body.data[2].id);
    expectError(await svc.request("GET", `/v1/events/${live.body.data[0].id}`), 404, "invalid_request_error", "event_not_found");
    expectError(await svc.request("GET", "/v1/events?starting_after=evt_nope"), 400, "invalid_request_error", "invalid_cursor");
    expectError(await svc.request("GET", "/v1/events?type=user.deleted"), 422, "invalid_request_error", "validation_error", "type");
  });

  it("admin PublishEvent refuses kyc.* types: KYC sessions emit them from their own decisions", async () => {
    const user = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() } });
    let refused: unknown = null;
    try {
      await svc.admin.publishEvent({
        projectId: svc.projectId,
        livemode: false,
        type: "kyc.approved",
        object: { object: "kyc", user_id: user.body.id, status: "approved", livemode: false },
      });
    } catch (error) {
      refused = error;
    }
    expect(String(refused)).to.contain("type must be one of transaction.received");
    expect((await svc.request("GET", `/v1/users/${user.body.id}`)).body.kyc_status).to.equal("none");
  });
});
