// The dashboard's overview lists a tenant's latest failed deliveries by reading each of its endpoints' latest from
// the index of deliveries not succeeded (as explain shows on mongod), never another tenant's failures: the queries
// the console sends are captured and explained, and the list is the one a scan of the records gives.
import { expect } from "chai";
import type { CommandStartedEvent, Document } from "mongodb";
import { ConsoleQueries } from "../../src/store/console-queries.ts";
import { connectDatabase, type Database } from "../../src/store/database.ts";
import { type WebhookDeliveryDocument, WebhookDeliveryRepository } from "../../src/store/webhook-delivery-repository.ts";
import { freshDatabaseUri } from "../support/database.ts";
import { indexScans } from "../support/index-scans.ts";

const START = Date.UTC(2026, 10, 1);
const scope = { projectId: "proj_console_failed", livemode: false };
const OTHER = "proj_console_other";
const OWN_ENDPOINTS = ["we_console_a", "we_console_b", "we_console_c"];

function delivery(i: number, projectId: string, endpointId: string, status: WebhookDeliveryDocument["status"]): WebhookDeliveryDocument {
  const createdAt = new Date(START + i * 1000);
  return {
    _id: `whd_${projectId === OTHER ? "other" : "own"}_${String(i).padStart(4, "0")}`,
    project_id: projectId,
    livemode: false,
    endpoint_id: endpointId,
    event_id: `evt_console_${i}`,
    event_type: "user.created",
    status,
    attempt_count: 7,
    next_attempt_at: null,
    last_attempt: null,
    attempts: [],
    lease_until: null,
    created_at: createdAt,
    updated_at: createdAt,
  };
}

describe("the console's failed deliveries of a tenant", () => {
  let database: Database;
  const started: CommandStartedEvent[] = [];

  before(async () => {
    database = await connectDatabase(await freshDatabaseUri("console_failed"), { monitorCommands: true });
    database.client.on("commandStarted", (event) => started.push(event));
    const repository = new WebhookDeliveryRepository(database.db);
    await repository.ensureIndexes();
    // The tenant: three endpoints, one failure in four (two of them at the same time, told apart by id); another
    // tenant: many more failures, all newer.
    const records = [
      ...Array.from({ length: 120 }, (_, i) => delivery(i, scope.projectId, OWN_ENDPOINTS[i % 3]!, i % 4 === 1 ? "failed" : "succeeded")),
      ...Array.from({ length: 400 }, (_, i) => delivery(1000 + i, OTHER, "we_console_other", "failed")),
      { ...delivery(117, scope.projectId, OWN_ENDPOINTS[1]!, "failed"), _id: "whd_own_0117b", event_id: "evt_console_117b" },
    ];
    await repository.insertManyOnce(records);
    await database.db.collection("webhook_endpoints").insertMany([
      ...OWN_ENDPOINTS.map((id) => ({ _id: id, project_id: scope.projectId, livemode: false }) as Document),
      { _id: "we_console_other", project_id: OTHER, livemode: false } as Document,
      // The same tenant's project in live mode has endpoints of its own, which are not read.
      { _id: "we_console_live", project_id: scope.projectId, livemode: true } as Document,
    ]);
  });
  after(async () => {
    await database?.close();
  });

  it("lists the tenant's newest failures across its endpoints, as a scan of the records would", async () => {
    const { failedDeliveries } = await new ConsoleQueries(database.db).recentActivity(scope, 5);
    const expected = (
      await database.db.collection<WebhookDeliveryDocument>("webhook_deliveries").find({ project_id: scope.projectId, status: "failed" }).toArray()
    )
      .sort((a, b) => b.created_at.getTime() - a.created_at.getTime() || b._id.localeCompare(a._id))
      .slice(0, 5)
      .map((d) => d._id);
    expect(failedDeliveries.map((d) => d._id)).to.deep.equal(expected);
    expect(expected.slice(0, 2)).to.deep.equal(["whd_own_0117b", "whd_own_0117"]);
  });

  it("reads each of the tenant's endpoints from not_succeeded_by_status, no more records than it keeps", async () => {
    started.length = 0;
    await new ConsoleQueries(database.db).recentActivity(scope, 5);
    const finds = started.filter((event) => event.commandName === "find" && event.command.find === "webhook_deliveries");
    expect(finds.map((event) => event.command.filter.endpoint_id).sort()).to.deep.equal(OWN_ENDPOINTS);
    for (const { command } of finds) {
      const explained = (await database.db
        .collection("webhook_deliveries")
        .find(command.filter)
        .sort(command.sort)
        .limit(command.limit)
        .explain("executionStats")) as Document;
      expect(indexScans(explained.queryPlanner.winningPlan)).to.deep.equal(["not_succeeded_by_status"]);
      expect(explained.executionStats.totalDocsExamined).to.be.at.most(5);
    }
  });
});
