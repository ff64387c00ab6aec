// Uniqueness comes from unique indexes, not read-then-write: parallel duplicates cannot both win.
import { expect } from "chai";
import { uniquePhone } from "../support/phones.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

describe("users: concurrent creation", () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  it("50 parallel creations with the same phone give exactly one 201 and 49 user_already_exists", async () => {
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) => svc.request("POST", "/v1/users", { body: { phone: "+14155550177", external_id: `ext-${i}` } })),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).to.have.length(1);
    expect(statuses.filter((s) => s === 409)).to.have.length(49);
    expect(responses.filter((r) => r.status === 409).every((r) => r.body.error.code === "user_already_exists")).to.equal(true);
    const events = await svc.request("GET", "/v1/events?type=user.created&limit=100");
    expect(events.body.data).to.have.length(1);
  });

  it("parallel creations with the same tagname in other cases give one 201", async () => {
    const responses = await Promise.all(
      ["Tag", "tag", "TAG", "tAg", "taG"].map((tagname) => svc.request("POST", "/v1/users", { body: { phone: uniquePhone(), tagname } })),
    );
    expect(responses.filter((r) => r.status === 201)).to.have.length(1);
    expect(responses.filter((r) => r.status === 409 && r.body.error.code === "tagname_already_taken")).to.have.length(4);
  });
});
