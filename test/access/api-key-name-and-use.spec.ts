// API keys carry a name given at creation and the time a request last presented them: recorded in the background
// at most once a minute per process (a request never waits for it), shown by AdminService and the operator console.
import { create } from "@bufbuild/protobuf";
import { expect } from "chai";
import { CreateApiKeyRequestSchema } from "../../gen/svc/admin/v1/admin_pb.ts";
import { LAST_USED_RESOLUTION_MS } from "../../src/access/api-key-authenticator.ts";
import { DashboardClient } from "../dashboard/support.ts";
import { rpcErrorOf } from "../support/errors.ts";
import { eventually } from "../support/eventually.ts";
import { startTestService, TEST_ADMIN_TOKEN, type TestService } from "../support/test-service.ts";

describe("API keys: name and last use", function () {
  this.timeout(30_000);
  let now = Date.parse("2026-11-27T09:00:00.000Z");
  let svc: TestService;
  before(async () => {
    svc = await startTestService({ clock: () => new Date(now) });
  });
  after(async () => {
    await svc.stop();
  });

  it("keeps the name given at creation and the last use, at most once a minute, as AdminService shows them", async () => {
    const { apiKey, secret } = await svc.admin.createApiKey(
      create(CreateApiKeyRequestSchema, { projectId: svc.projectId, livemode: false, name: "Billing worker" }),
    );
    expect(apiKey!.name).to.equal("Billing worker");
    expect(apiKey!.lastUsedAt).to.equal(undefined);

    const lastUsed = async () => (await svc.admin.getApiKey({ id: apiKey!.id })).apiKey!.lastUsedAt;
    expect((await svc.request("GET", "/v1/events", { key: secret })).status).to.equal(200);
    await eventually(lastUsed, (at) => at !== undefined);
    const first = Number((await lastUsed())!.seconds) * 1000;
    expect(first).to.equal(now);

    // Within the minute: not written again. After it: the new time.
    now += LAST_USED_RESOLUTION_MS / 2;
    await svc.request("GET", "/v1/events", { key: secret });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(Number((await lastUsed())!.seconds) * 1000).to.equal(first);
    now += LAST_USED_RESOLUTION_MS;
    await svc.request("GET", "/v1/events", { key: secret });
    await eventually(lastUsed, (at) => Number(at!.seconds) * 1000 === now);
  });

  it("refuses an empty, too long or multi-line name with 422 validation_error on name", async () => {
    for (const name of ["", "   ", "x".repeat(101), "two\nlines"]) {
      const refusal = await rpcErrorOf(svc.admin.createApiKey({ projectId: svc.projectId, livemode: false, name }));
      expect(refusal, JSON.stringify(name)).to.deep.include({ reason: "validation_error", param: "name" });
    }
    const longest = await svc.admin.createApiKey({ projectId: svc.projectId, livemode: false, name: "é".repeat(100) });
    expect(longest.apiKey!.name).to.have.length(100);
  });

  it("shows both in the operator console, and issues a named key from it", async () => {
    const operator = new DashboardClient(svc);
    expect((await operator.signIn(TEST_ADMIN_TOKEN)).status).to.equal(303);
    const pagePath = `/dashboard/operator/projects/${svc.projectId}`;
    const page = await operator.get(pagePath);
    expect(page.text).to.include('<td class="key-name">Billing worker</td>');
    expect(page.text).to.match(/<td class="key-last-used"><time/);
    const issued = await operator.submit(pagePath, `${pagePath}/keys`, { livemode: "false", name: "Console key" });
    expect(issued.status).to.equal(200);
    expect(issued.text).to.include('<td class="key-name">Console key</td>');
  });
});
