// The relay's sweep finds the events not fanned out through the index that holds only them (fan_out_pending),
// shown by explain as on mongod: over `retention`, which gives the same range and order, the sweep walked past
// every event already fanned out, every few seconds.
import { expect } from "chai";
import type { Document } from "mongodb";
import type { Database } from "../../src/store/database.ts";
import { type EventDocument, EventRepository } from "../../src/store/event-repository.ts";
import { freshDatabase } from "../support/database.ts";
import { indexScans } from "../support/index-scans.ts";

const START = Date.UTC(2026, 10, 1);

function event(i: number, fannedOut: boolean): EventDocument {
  return {
    _id: `evt_index_${String(i).padStart(4, "0")}`,
    project_id: "proj_event_indexes",
    livemode: false,
    type: "transaction.completed",
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
});
