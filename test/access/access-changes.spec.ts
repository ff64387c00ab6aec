// Changes made through AdminService take effect at once in the process that made them, although the
// authenticator caches keys: revocation, suspension and its lifting, live access switched off and on.
import { expect } from "chai";
import { expectError } from "../support/errors.ts";
import { bearer, grpc, GrpcTestClient } from "../support/grpc-client.ts";
import { createKey, createProject } from "../support/tenancy.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

describe("access changes take effect at once", () => {
  let svc: TestService;
  let client: GrpcTestClient;
  before(async () => {
    // A long cache, so only invalidation can explain an immediate change.
    svc = await startTestService({ env: { SVC_AUTH_CACHE_MS: "60000" } });
    client = new GrpcTestClient(svc.grpcAddress);
  });
  after(async () => {
    client.close();
    await svc.stop();
  });

  const read = (key: string) => svc.request("GET", "/v1/events", { key });

  it("a revoked key is refused on its next call, over REST and gRPC", async () => {
    const key = await createKey(svc, svc.projectId);
    expect((await read(key.secret)).status).to.equal(200);
    await client.ok("EventsService", "ListEvents", {}, bearer(key.secret));
    await svc.admin.revokeApiKey({ id: key.id });
    expectError(await read(key.secret), 401, "authentication_error", "api_key_revoked");
    await client.fails("EventsService", "ListEvents", {}, bearer(key.secret), { code: grpc.status.UNAUTHENTICATED, reason: "api_key_revoked" });
  });

  it("suspending an organization refuses its keys at once, and lifting it restores them", async () => {
    const project = await createProject(svc, { liveEnabled: true });
    const sandbox = (await createKey(svc, project.projectId)).secret;
    const live = (await createKey(svc, project.projectId, { livemode: true })).secret;
    expect((await read(sandbox)).status).to.equal(200);
    expect((await read(live)).status).to.equal(200);

    await svc.admin.updateOrganization({ id: project.organizationId, suspended: true });
    expectError(await read(sandbox), 403, "permission_error", "organization_suspended");
    expectError(await read(live), 403, "permission_error", "organization_suspended");
    await client.fails("EventsService", "ListEvents", {}, bearer(live), { code: grpc.status.PERMISSION_DENIED, reason: "organization_suspended" });

    await svc.admin.updateOrganization({ id: project.organizationId, suspended: false });
    expect((await read(sandbox)).status).to.equal(200);
    await client.ok("EventsService", "ListEvents", {}, bearer(live));
  });

  it("switching live access off refuses live keys only, and switching it on restores them", async () => {
    const project = await createProject(svc, { liveEnabled: true });
    const sandbox = (await createKey(svc, project.projectId)).secret;
    const live = (await createKey(svc, project.projectId, { livemode: true })).secret;
    expect((await read(live)).status).to.equal(200);

    await svc.admin.updateOrganization({ id: project.organizationId, liveEnabled: false });
    expectError(await read(live), 403, "permission_error", "live_not_enabled");
    expect((await read(sandbox)).status).to.equal(200);

    await svc.admin.updateOrganization({ id: project.organizationId, liveEnabled: true });
    expect((await read(live)).status).to.equal(200);
  });

  it("key checks come before the organization: a revoked key of a suspended organization is api_key_revoked", async () => {
    const project = await createProject(svc);
    const key = await createKey(svc, project.projectId);
    await svc.admin.updateOrganization({ id: project.organizationId, suspended: true });
    await svc.admin.revokeApiKey({ id: key.id });
    expectError(await read(key.secret), 401, "authentication_error", "api_key_revoked");
  });

  it("a suspension outranks live access: a suspended organization without live answers organization_suspended", async () => {
    const project = await createProject(svc);
    const live = (await createKey(svc, project.projectId, { livemode: true })).secret;
    expectError(await read(live), 403, "permission_error", "live_not_enabled");
    await svc.admin.updateOrganization({ id: project.organizationId, suspended: true });
    expectError(await read(live), 403, "permission_error", "organization_suspended");
  });
});

describe("access changes made by another instance", () => {
  it("are seen within the authentication cache time (SVC_AUTH_CACHE_MS)", async () => {
    const first = await startTestService();
    const second = await startTestService({ databaseUri: first.databaseUri, env: { SVC_AUTH_CACHE_MS: "300" } });
    try {
      const key = await createKey(first, first.projectId);
      expect((await second.request("GET", "/v1/events", { key: key.secret })).status).to.equal(200);
      await first.admin.revokeApiKey({ id: key.id });
      expectError(await first.request("GET", "/v1/events", { key: key.secret }), 401, "authentication_error", "api_key_revoked");
      // The second instance trusts its cached outcome for at most 300 ms.
      await new Promise((resolve) => setTimeout(resolve, 350));
      expectError(await second.request("GET", "/v1/events", { key: key.secret }), 401, "authentication_error", "api_key_revoked");
    } finally {
      await second.stop();
      await first.stop();
    }
  });
});
