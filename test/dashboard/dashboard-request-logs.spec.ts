// The console's Logs page: the session's project and environment's calls (the API's and the console's own),
// filtered by status class, route and source without JavaScript, a request id looked up, each log on its page;
// another project's or environment's log is not found.
import { expect } from "chai";
import { eventually } from "../support/eventually.ts";
import { createOtherProject } from "../support/tenancy.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { DashboardClient } from "./support.ts";

describe("dashboard: Logs", function () {
  this.timeout(30_000);
  let svc: TestService;
  let console: DashboardClient;
  let refusedId: string;
  /** The row of the refused call (the log's own lookups name its id in their paths, so the id alone is not enough). */
  const rowOf = (id: string) => `href="/dashboard/logs/${id}"`;

  before(async () => {
    svc = await startTestService();
    console = new DashboardClient(svc);
    await console.signIn(svc.sandboxKey);
    const refused = await svc.request("GET", "/v1/users/999999999");
    refusedId = refused.headers.get("x-request-id")!;
    await eventually(
      () => svc.request("GET", `/v1/request-logs/${refusedId}`),
      (r) => r.status === 200,
    );
  });

  after(async () => {
    await svc?.stop();
  });

  it("is in the navigation and lists calls newest first, each row linking to its log", async () => {
    const overview = await console.get("/dashboard");
    expect(overview.text).to.include('href="/dashboard/logs"');
    const logs = await console.get("/dashboard/logs");
    expect(logs.status).to.equal(200);
    expect(logs.text).to.include(`href="/dashboard/logs/${refusedId}"`);
    expect(logs.text).to.include("GET /v1/users/999999999");
    expect(logs.text).to.include("user_not_found");
  });

  it("filters by status class, route and source with plain GET forms", async () => {
    const fourHundreds = await console.get("/dashboard/logs?status=4xx");
    expect(fourHundreds.text).to.include(rowOf(refusedId));
    expect(fourHundreds.text).to.not.match(/<span class="tag tag-succeeded">2\d\d<\/span>/);
    const successes = await console.get("/dashboard/logs?status=2xx");
    expect(successes.text).to.not.include(rowOf(refusedId));
    const route = await console.get(`/dashboard/logs?route=${encodeURIComponent("/v1/users/{id}")}&source=rest`);
    expect(route.text).to.include(rowOf(refusedId));
    const dashboardOnly = await eventually(
      () => console.get("/dashboard/logs?source=dashboard"),
      (page) => page.text.includes("/svc.v1.RequestLogsService/ListRequestLogs"),
    );
    expect(dashboardOnly.text).to.not.include(rowOf(refusedId));
    const badRoute = await console.get("/dashboard/logs?route=users");
    expect(badRoute.status).to.equal(422);
    expect(badRoute.text).to.include("validation_error");
  });

  it("finds a request by its id, and opens a log on its own page", async () => {
    const found = await console.get(`/dashboard/logs?request_id=${refusedId}`);
    expect(found.status).to.equal(200);
    expect(found.text).to.include("&quot;error_code&quot;: &quot;user_not_found&quot;");
    const missing = await console.get("/dashboard/logs?request_id=req_nothing");
    expect(missing.text).to.include("No request of this project and environment has the id");
    const detail = await console.get(`/dashboard/logs/${refusedId}`);
    expect(detail.status).to.equal(200);
    expect(detail.text).to.include("/v1/users/{id}");
  });

  it("does not show another project's or environment's log", async () => {
    const other = await createOtherProject(svc);
    for (const key of [other.sandboxKey, svc.liveKey]) {
      const elsewhere = new DashboardClient(svc);
      await elsewhere.signIn(key);
      const detail = await elsewhere.get(`/dashboard/logs/${refusedId}`);
      expect(detail.status).to.equal(404);
      expect(detail.text).to.include("request_log_not_found");
      expect((await elsewhere.get("/dashboard/logs")).text).to.not.include(rowOf(refusedId));
    }
  });
});
