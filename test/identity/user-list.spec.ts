// GET /v1/users: the users of the key's project and environment, newest first, with exact-match filters, the
// list conventions (limit, starting_after, invalid_cursor) and no profile in the items.
import { expect } from "chai";
import { expectError } from "../support/errors.ts";
import { uniquePhone } from "../support/phones.ts";
import { createOtherProject } from "../support/tenancy.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

describe("GET /v1/users", () => {
  let svc: TestService;
  let tenant: Awaited<ReturnType<typeof createOtherProject>>;
  /** Created oldest first: ids in creation order. */
  const created: string[] = [];
  let live: { id: string };
  let suspended: string;

  const list = (query: string, key = tenant.sandboxKey) => svc.request("GET", `/v1/users${query}`, { key });
  const ids = async (query: string, key?: string): Promise<string[]> => (await list(query, key)).body.data.map((u: { id: string }) => u.id);

  before(async () => {
    let now = Date.parse("2026-11-01T00:00:00Z");
    svc = await startTestService({ clock: () => new Date((now += 1000)) });
    tenant = await createOtherProject(svc);
    const bodies = [
      { phone: uniquePhone(), external_id: "ext-a", tagname: "Ada.L" },
      { phone: uniquePhone(), external_id: "ext-b" },
      { phone: uniquePhone(), first_name: "Grace" },
      { phone: uniquePhone() },
    ];
    for (const body of bodies) {
      const response = await svc.request("POST", "/v1/users", { body, key: tenant.sandboxKey });
      expect(response.status).to.equal(201);
      created.push(response.body.id);
    }
    suspended = created[1]!;
    await svc.admin.suspendUser({ projectId: tenant.projectId, livemode: false, userId: suspended });
    live = (await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() }, key: tenant.liveKey })).body;
    // Users of another project never show.
    await svc.request("POST", "/v1/users", { body: { phone: uniquePhone(), external_id: "ext-a" } });
  });
  after(async () => {
    await svc.stop();
  });

  it("lists the environment's users newest first, without profiles", async () => {
    const response = await list("");
    expect(response.status).to.equal(200);
    expect(response.body).to.include({ object: "list", url: "/v1/users", has_more: false });
    expect(response.body.data.map((u: { id: string }) => u.id)).to.deep.equal([...created].reverse());
    for (const user of response.body.data) expect(user).to.not.have.property("profile");
    const liveList = await list("", tenant.liveKey);
    expect(liveList.body.data.map((u: { id: string }) => u.id)).to.deep.equal([live.id]);
  });

  it("filters on external_id, phone, tagname (ignoring case), verified and suspended", async () => {
    expect(await ids("?external_id=ext-a")).to.deep.equal([created[0]]);
    const phone = (await svc.request("GET", `/v1/users/${created[2]}`, { key: tenant.sandboxKey })).body.phone;
    expect(await ids(`?phone=${encodeURIComponent(phone)}`)).to.deep.equal([created[2]]);
    expect(await ids("?tagname=ada.l")).to.deep.equal([created[0]]);
    expect(await ids("?suspended=true")).to.deep.equal([suspended]);
    expect(await ids("?suspended=false")).to.have.members(created.filter((id) => id !== suspended));
    expect(await ids("?verified=true")).to.have.length(created.length);
    expect(await ids("?verified=false", tenant.liveKey)).to.deep.equal([live.id]);
    expect(await ids("?kyc_status=none&external_id=ext-b")).to.deep.equal([suspended]);
    expect(await ids("?kyc_status=approved")).to.deep.equal([]);
    expect(await ids("?external_id=nobody")).to.deep.equal([]);
  });

  it("pages with limit and starting_after; an unknown cursor is 400 invalid_cursor", async () => {
    const first = await list("?limit=3");
    expect(first.body.data.map((u: { id: string }) => u.id)).to.deep.equal([...created].reverse().slice(0, 3));
    expect(first.body.has_more).to.equal(true);
    const second = await list(`?limit=3&starting_after=${first.body.data[2].id}`);
    expect(second.body.data.map((u: { id: string }) => u.id)).to.deep.equal([created[0]]);
    expect(second.body.has_more).to.equal(false);
    const unknown = await list("?starting_after=123456789");
    expect(unknown.status).to.equal(400);
    expect(unknown.body.error.code).to.equal("invalid_cursor");
    // A user of the other environment is no cursor here either.
    const otherEnvironment = await list(`?starting_after=${live.id}`);
    expect(otherEnvironment.body.error.code).to.equal("invalid_cursor");
  });

  it("checks limit first and the filters before the cursor's lookup; a user of another project is no cursor", async () => {
    expectError(await list("?limit=0&kyc_status=unknown"), 422, "invalid_request_error", "validation_error", "limit");
    expectError(await list("?kyc_status=unknown&limit=0"), 422, "invalid_request_error", "validation_error", "limit");
    expectError(await list("?kyc_status=unknown&starting_after=123456789"), 422, "invalid_request_error", "validation_error", "kyc_status");
    const elsewhere = (await svc.request("GET", "/v1/users?limit=1")).body.data[0].id;
    expectError(await list(`?starting_after=${elsewhere}`), 400, "invalid_request_error", "invalid_cursor");
  });

  it("refuses bad parameters with 422 validation_error naming them", async () => {
    for (const [query, param] of [
      ["?limit=0", "limit"],
      ["?limit=101", "limit"],
      ["?verified=yes", "verified"],
      ["?kyc_status=unknown", "kyc_status"],
      ["?profile=1", "profile"],
    ]) {
      expectError(await list(query!), 422, "invalid_request_error", "validation_error", param);
    }
  });

  // Last: it moves the users' kyc_status, which the tests above read as none.
  it("filters on kyc_status in each status, alone and with suspended", async () => {
    const decide = async (userId: string, action: "approve" | "reject" | null) => {
      const session = await svc.request("POST", `/v1/users/${userId}/kyc-sessions`, { key: tenant.sandboxKey, body: {} });
      expect(session.status, session.text).to.equal(201);
      if (!action) return;
      const decided = await svc.request("POST", `/v1/sandbox/kyc-sessions/${session.body.id}/${action}`, { key: tenant.sandboxKey, body: {} });
      expect(decided.status, decided.text).to.equal(200);
    };
    await decide(created[0]!, "approve");
    await decide(created[2]!, "reject");
    await decide(created[3]!, null);
    expect(await ids("?kyc_status=approved")).to.deep.equal([created[0]]);
    expect(await ids("?kyc_status=rejected")).to.deep.equal([created[2]]);
    expect(await ids("?kyc_status=pending")).to.deep.equal([created[3]]);
    expect(await ids("?kyc_status=none")).to.deep.equal([suspended]);
    expect(await ids("?kyc_status=none&suspended=false")).to.deep.equal([]);
    expect(await ids("?kyc_status=rejected&suspended=false&verified=true")).to.deep.equal([created[2]]);
    expect(await ids("?kyc_status=none", tenant.liveKey)).to.deep.equal([live.id]);
  });
});
