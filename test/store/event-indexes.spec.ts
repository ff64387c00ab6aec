// The relay's sweep finds the events not fanned out through the index that holds only them (fan_out_pending),
// shown by explain as on mongod: over `retention`, which gives the same range and order, the sweep walked past
// every event already fanned out, every few seconds. The list, newest first, reads the tenant's indexes in time
// order backward (tenant_by_time, and tenant_type_by_time for a type); the indexes with time and id descending, which
// earlier versions made, are dropped.
import { expect } from "chai";
import type { Document } from "mongodb";
import type { Database } from "../../src/store/database.ts";
import { type EventDocument, EventRepository } from "../../src/store/event-repository.ts";
import { freshDatabase } from "../support/database.ts";
import { indexScans } from "../support/index-scans.ts";

const START = Date.UTC(2026, 10, 1);
const scope = { projectId: "proj_event_indexes", livemode: false };

function event(i: number, fannedOut: boolean): EventDocument {
  return {
    _id: `evt_index_${String(i).padStart(4, "0")}`,
    project_id: "proj_event_indexes",
    livemode: false,
    type: i % 2 === 0 ? "transaction.completed" : "user.created",
    created_at: new Date(START + i * 1000),
    data: { object: { id: `txn_index_${i}` } },
    fanned_out: fannedOut,
  };
}

describe("event indexes", () => {
  let database: Database;
  let repository: EventRepository;

  before(async () => {
    database = await freshDatabase("event_indexes");
    repository = new EventRepository(database.db);
    await repository.ensureIndexes();
    // 1,000 events fanned out, and three not among the newest.
    await database.db.collection<EventDocument>("events").insertMany(Array.from({ length: 1003 }, (_, i) => event(i, i < 1000)));
  });
  after(() => database.close());

  it("answers the relay's sweep from fan_out_pending, reading only the events not fanned out", async () => {
    const before = new Date(START + 1002 * 1000);
    expect((await repository.findNotFannedOut(before, 100)).map((e) => e._id)).to.deep.equal(["evt_index_1000", "evt_index_1001", "evt_index_1002"]);
    const explained = (await database.db
      .collection<EventDocument>("events")
      .find({ fanned_out: false, created_at: { $lte: before } })
      .sort({ created_at: 1 })
      .limit(100)
      .explain("executionStats")) as Document;
    expect(indexScans(explained.queryPlanner.winningPlan)).to.deep.equal(["fan_out_pending"]);
    expect(explained.executionStats.totalDocsExamined).to.equal(3);
  });

  /** The plan of the list's first page (the filter, newest first, one more than the limit). */
  async function listPlan(filter: Document): Promise<{ indexes: string[]; docsExamined: number }> {
    const explained = (await database.db
      .collection<EventDocument>("events")
      .find(filter)
      .sort({ created_at: -1, _id: -1 })
      .limit(11)
      .explain("executionStats")) as Document;
    return { indexes: indexScans(explained.queryPlanner.winningPlan), docsExamined: explained.executionStats.totalDocsExamined };
  }

  it("answers the list from tenant_by_time, newest first, reading only the events it returns", async () => {
    expect(await listPlan({ project_id: scope.projectId, livemode: false })).to.deep.equal({ indexes: ["tenant_by_time"], docsExamined: 11 });
    const page = await repository.list(scope, { limit: 2, after: null });
    expect(page.items.map((e) => e._id)).to.deep.equal(["evt_index_1002", "evt_index_1001"]);
    expect((await repository.list(scope, { limit: 2, after: page.items[1]! })).items.map((e) => e._id)).to.deep.equal([
      "evt_index_1000",
      "evt_index_0999",
    ]);
  });

  it("answers the list of a type from tenant_type_by_time, newest first, reading only the events it returns", async () => {
    const filter = { project_id: scope.projectId, livemode: false, type: "user.created" };
    expect(await listPlan(filter)).to.deep.equal({ indexes: ["tenant_type_by_time"], docsExamined: 11 });
    const page = await repository.list(scope, { limit: 2, after: null, type: "user.created" });
    expect(page.items.map((e) => e._id)).to.deep.equal(["evt_index_1001", "evt_index_0999"]);
  });

  it("replaces the indexes that earlier versions made (time and id descending)", async () => {
    const earlier = await freshDatabase("event_indexes_earlier");
    try {
      const collection = earlier.db.collection("events");
      await collection.createIndex({ project_id: 1, livemode: 1, created_at: -1, _id: -1 }, { name: "tenant_newest_first" });
      await collection.createIndex({ project_id: 1, livemode: 1, type: 1, created_at: -1, _id: -1 }, { name: "tenant_type_newest_first" });
      await new EventRepository(earlier.db).ensureIndexes();
      await new EventRepository(earlier.db).ensureIndexes();
      expect((await collection.indexes()).map((index) => index.name).sort()).to.deep.equal([
        "_id_",
        "about_object",
        "fan_out_pending",
        "retention",
        "tenant_by_time",
        "tenant_type_by_time",
      ]);
    } finally {
      await earlier.close();
    }
  });
});
