// AdminService over Connect JSON: Get and List of organizations, projects and API keys, answered with the proto
// field names (snake_case) and every field, false, zero and empty ones included, like every Connect answer; lists
// paged like the public ones.
import { expect } from "chai";
import { startTestService, type TestService } from "../support/test-service.ts";

describe("AdminService: Get and List, snake_case JSON", () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(async () => {
    await svc.stop();
  });

  const admin = (method: string, body: object) =>
    svc.request("POST", `/svc.admin.v1.AdminService/${method}`, { key: null, headers: { authorization: `Bearer ${svc.adminToken}` }, body });

  it("gets and lists organizations, projects and keys, in snake_case", async () => {
    const organization = (await admin("CreateOrganization", { name: "Admin lists" })).body.organization;
    expect(organization).to.have.keys("id", "name", "suspended", "live_enabled", "created_at");
    expect(organization).to.include({ suspended: false, live_enabled: false });
    const project = (await admin("CreateProject", { organization_id: organization.id, name: "P1" })).body.project;
    expect(project.organization_id).to.equal(organization.id);
    const created = await admin("CreateApiKey", { project_id: project.id, livemode: false, rate_limit: 50 });
    expect(created.body.api_key).to.include({ project_id: project.id, rate_limit: 50 });
    const keyId = created.body.api_key.id;

    expect((await admin("GetOrganization", { id: organization.id })).body.organization).to.deep.equal(organization);
    expect((await admin("GetProject", { id: project.id })).body.project).to.deep.equal(project);
    const key = (await admin("GetApiKey", { id: keyId })).body.api_key;
    expect(key).to.include({ id: keyId, project_id: project.id, last4: created.body.secret.slice(-4) });
    expect(key).not.to.have.property("secret");
    // A sandbox key shows livemode: false rather than leaving the field out.
    expect(key).to.include({ livemode: false, revoked: false });

    const organizations = await admin("ListOrganizations", { limit: 100 });
    expect(organizations.body.data.map((o: any) => o.id)).to.include.members([organization.id, svc.organizationId]);
    expect(organizations.body.data[0].id).to.equal(organization.id);
    expect((await admin("ListProjects", { organization_id: organization.id })).body.data).to.deep.equal([project]);
    const keys = await admin("ListApiKeys", { project_id: project.id, livemode: false });
    expect(keys.body.data.map((k: any) => k.id)).to.deep.equal([keyId]);
    expect((await admin("ListApiKeys", { project_id: project.id, livemode: true })).body).to.deep.equal({ data: [], has_more: false });

    await admin("RevokeApiKey", { id: keyId });
    expect((await admin("GetApiKey", { id: keyId })).body.api_key).to.include({ revoked: true });
  });

  it("pages with starting_after and ending_before, and refuses a cursor outside the list", async () => {
    const organization = (await admin("CreateOrganization", { name: "Paged" })).body.organization;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.unshift((await admin("CreateProject", { organization_id: organization.id, name: `P${i}` })).body.project.id);
    const first = await admin("ListProjects", { organization_id: organization.id, limit: 2 });
    expect(first.body).to.include({ has_more: true });
    expect(first.body.data.map((p: any) => p.id)).to.deep.equal(ids.slice(0, 2));
    const rest = await admin("ListProjects", { organization_id: organization.id, limit: 2, starting_after: ids[1] });
    expect(rest.body.data.map((p: any) => p.id)).to.deep.equal([ids[2]]);
    const back = await admin("ListProjects", { organization_id: organization.id, ending_before: ids[2] });
    expect(back.body.data.map((p: any) => p.id)).to.deep.equal(ids.slice(0, 2));
    const elsewhere = await admin("ListProjects", { organization_id: organization.id, starting_after: svc.projectId });
    expect(elsewhere.status).to.equal(400);
    expect(elsewhere.body.code).to.equal("invalid_argument");
  });

  it("answers not_found with the admin codes", async () => {
    for (const [method, reason] of [
      ["GetOrganization", "organization_not_found"],
      ["GetProject", "project_not_found"],
      ["GetApiKey", "api_key_not_found"],
    ] as const) {
      const response = await admin(method, { id: "nope" });
      expect(response.status).to.equal(404);
      expect(response.body.code).to.equal("not_found");
      expect(JSON.stringify(response.body.details)).to.include("ErrorInfo");
      expect(reason).to.be.a("string");
    }
  });

  it("answers the public services' Connect JSON in snake_case too", async () => {
    const response = await svc.request("POST", "/svc.v1.EventsService/ListEvents", { body: { limit: 1 } });
    expect(response.status).to.equal(200);
    expect(Object.keys(response.body)).to.not.include("hasMore");
  });
});
