// Each query of the delivery records is answered from the index made for it, shown by explain as on mongod: every
// delivery's record is written into each index at its insert and again at its outcome, so there are three (the
// _id's aside), and a succeeded delivery is in two of them.
import { expect } from "chai";
import type { Document } from "mongodb";
import type { Database } from "../../src/store/database.ts";
import { type DeliveryStatus, type WebhookDeliveryDocument, WebhookDeliveryRepository } from "../../src/store/webhook-delivery-repository.ts";
import { freshDatabase } from "../support/database.ts";
import { indexScans } from "../support/index-scans.ts";

const START = Date.UTC(2026, 10, 1);
const ENDPOINTS = ["we_index_a", "we_index_b"];

/** 600 deliveries, each event's to two endpoints; of the second endpoint's, one in five pending, one in five failed. */
function deliveries(): WebhookDeliveryDocument[] {
  return Array.from({ length: 600 }, (_, i) => {
    const status: DeliveryStatus = i % 10 === 3 ? "pending" : i % 10 === 7 ? "failed" : "succeeded";
    const createdAt = new Date(START + i * 1000);
    return {
      _id: `whd_index_${String(i).padStart(4, "0")}`,
      project_id: "proj_indexes",
      livemode: false,
      endpoint_id: ENDPOINTS[i % 2]!,
      event_id: `evt_index_${Math.floor(i / 2)}`,
      event_type: "user.created",
      status,
      attempt_count: status === "pending" ? 0 : 1,
      next_attempt_at: status === "pending" ? createdAt : null,
      last_attempt: null,
      attempts: [],
      lease_until: null,
      created_at: createdAt,
      updated_at: createdAt,
    };
  });
}

describe("webhook delivery indexes", () => {
  let database: Database;
  let repository: WebhookDeliveryRepository;

  before(async () => {
    database = await freshDatabase("delivery_indexes");
    repository = new WebhookDeliveryRepository(database.db);
    await repository.ensureIndexes();
    await repository.insertManyOnce(deliveries());
  });
  after(async () => {
    await database.close();
  });

  const collection = () => database.db.collection<WebhookDeliveryDocument>("webhook_deliveries");

  /** The index scans of a query's winning plan, and how many records it read against how many it answered. */
  async function plan(filter: Document, sort?: Document, limit = 0): Promise<{ indexes: string[]; docsExamined: number; returned: number }> {
    let cursor = collection().find(filter);
    if (sort) cursor = cursor.sort(sort);
    if (limit) cursor = cursor.limit(limit);
    const explained = (await cursor.explain("executionStats")) as Document;
    return {
      indexes: indexScans(explained.queryPlanner.winningPlan),
      docsExamined: explained.executionStats.totalDocsExamined,
      returned: explained.executionStats.nReturned,
    };
  }
  const newestFirst = { created_at: -1, _id: -1 };

  // A query, the index that answers it, and how many records it reads per record it answers at most.
  const cases: [string, () => Document, Document | undefined, number, string, number][] = [
    ["an endpoint's list", () => ({ endpoint_id: ENDPOINTS[0] }), newestFirst, 11, "endpoint_by_time", 1],
    ["an endpoint's pending list", () => ({ endpoint_id: ENDPOINTS[1], status: "pending" }), newestFirst, 11, "not_succeeded_by_status", 1],
    ["an endpoint's failed list", () => ({ endpoint_id: ENDPOINTS[1], status: "failed" }), newestFirst, 11, "not_succeeded_by_status", 1],
    // Most deliveries succeed: the endpoint's list, past the few that did not.
    ["an endpoint's succeeded list", () => ({ endpoint_id: ENDPOINTS[0], status: "succeeded" }), newestFirst, 11, "endpoint_by_time", 2],
    ["an endpoint's pending count", () => ({ endpoint_id: ENDPOINTS[1], status: "pending" }), undefined, 0, "not_succeeded_by_status", 1],
    ["every pending delivery", () => ({ status: "pending" }), undefined, 0, "not_succeeded_by_status", 1],
    [
      "recovery's failed deliveries of a time window",
      () => ({ endpoint_id: ENDPOINTS[1], status: "failed", created_at: { $gte: new Date(START), $lt: new Date(START + 300_000) } }),
      { created_at: 1, _id: 1 },
      10,
      "not_succeeded_by_status",
      1,
    ],
    [
      "the pending deliveries of events",
      () => ({ event_id: { $in: ["evt_index_1", "evt_index_6", "evt_index_8"] }, status: "pending" }),
      undefined,
      0,
      "one_per_event_and_endpoint",
      3,
    ],
  ];
  for (const [name, filter, sort, limit, index, readsPerRecord] of cases) {
    it(`answers ${name} from ${index}, reading at most ${readsPerRecord} records per record answered`, async () => {
      const found = await plan(filter(), sort, limit);
      expect(found.indexes).to.deep.equal([index]);
      expect(found.returned).to.be.above(0);
      expect(found.docsExamined).to.be.at.most(found.returned * readsPerRecord);
    });
  }

  it("lists an endpoint's failed deliveries newest first, as a scan of the records would", async () => {
    const first = await repository.list(ENDPOINTS[1]!, { limit: 40, after: null, status: "failed" });
    const second = await repository.list(ENDPOINTS[1]!, { limit: 40, after: first.items.at(-1)!, status: "failed" });
    const failed = deliveries().filter((d) => d.endpoint_id === ENDPOINTS[1] && d.status === "failed");
    expect(failed).to.have.length(60);
    expect([...first.items, ...second.items].map((d) => d._id)).to.deep.equal(failed.map((d) => d._id).reverse());
    expect(second.hasMore).to.equal(false);
  });

  it("counts pending deliveries, each endpoint's and all", async () => {
    expect(await repository.countPending(ENDPOINTS[1]!, 1000)).to.equal(60);
    expect(await repository.countPending(ENDPOINTS[0]!, 1000)).to.equal(0);
    expect(await repository.countAllPending()).to.equal(60);
    const schedules = [];
    for await (const batch of repository.pendingSchedules(7)) schedules.push(...batch);
    expect(schedules).to.have.length(60);
  });

  it("drops the indexes earlier versions made, each delivery in all of them (newest first; by status; by next attempt)", async () => {
    const earlier = await freshDatabase("delivery_indexes_earlier");
    try {
      const records = earlier.db.collection("webhook_deliveries");
      await records.createIndex({ endpoint_id: 1, created_at: -1, _id: -1 }, { name: "endpoint_newest_first" });
      await records.createIndex({ endpoint_id: 1, status: 1, created_at: -1, _id: -1 }, { name: "endpoint_status_newest_first" });
      await records.createIndex({ next_attempt_at: 1 }, { name: "due", partialFilterExpression: { status: "pending" } });
      await new WebhookDeliveryRepository(earlier.db).ensureIndexes();
      await new WebhookDeliveryRepository(earlier.db).ensureIndexes();
      const names = (await records.indexes()).map((index) => index.name).sort();
      expect(names).to.deep.equal(["_id_", "endpoint_by_time", "not_succeeded_by_status", "one_per_event_and_endpoint"]);
    } finally {
      await earlier.db.dropDatabase();
      await earlier.close();
    }
  });

  it("holds the pending and failed deliveries alone in the index of those not succeeded", async () => {
    const explained = (await collection()
      .find({ status: { $lt: "succeeded" } })
      .explain("executionStats")) as Document;
    expect(indexScans(explained.queryPlanner.winningPlan)).to.deep.equal(["not_succeeded_by_status"]);
    expect(explained.executionStats.nReturned).to.equal(120);
    expect(explained.executionStats.totalKeysExamined).to.be.at.most(121);
  });
});
