// A user's transaction list is answered from `user_by_time` (the user, then time and id ascending, read backward),
// and the dashboard's overview of a tenant (its latest transactions, its week's volumes) from `tenant_by_time`,
// shown by explain as on mongod; neither lists another tenant's transaction; the index led by the tenant with time
// and id descending, which earlier versions made, is dropped.
import { expect } from "chai";
import type { Document } from "mongodb";
import type { Database } from "../../src/store/database.ts";
import { ConsoleQueries } from "../../src/store/console-queries.ts";
import { type TransactionDocument, TransactionRepository } from "../../src/store/transaction-repository.ts";
import { freshDatabase } from "../support/database.ts";
import { indexScans } from "../support/index-scans.ts";
import { transactionRecord } from "../support/transaction-records.ts";

const scope = { projectId: "proj_transaction_indexes", livemode: false };
const START = Date.UTC(2026, 10, 1);
const USERS = ["100000001", "100000002", "100000003", "100000004"];

describe("transaction indexes", () => {
  let database: Database;
  let repository: TransactionRepository;

  before(async () => {
    database = await freshDatabase("transaction_indexes");
    repository = new TransactionRepository(database.db);
    await repository.ensureIndexes();
    // 400 transactions of four users, and one of the first user's id in another environment.
    const records = Array.from({ length: 400 }, (_, i) =>
      transactionRecord({
        id: `txn_index_${String(i).padStart(4, "0")}`,
        project_id: scope.projectId,
        user_id: USERS[i % USERS.length]!,
        created_at: new Date(START + i * 1000),
      }),
    );
    records.push(
      transactionRecord({ id: "txn_index_live", project_id: scope.projectId, livemode: true, user_id: USERS[0]!, created_at: new Date(START) }),
    );
    for (const record of records) await repository.project(record, "new");
  });
  after(() => database.close());

  it("answers a user's list, newest first, from user_by_time, reading only the entries it returns", async () => {
    const explained = (await database.db
      .collection<TransactionDocument>("transactions")
      // As the repository asks it: with the user's index named, the tenant's ordering by time as well.
      .find({ project_id: scope.projectId, livemode: scope.livemode, user_id: USERS[1]! }, { hint: "user_by_time" })
      .sort({ created_at: -1, _id: -1 })
      .limit(11)
      .explain("executionStats")) as Document;
    expect(indexScans(explained.queryPlanner.winningPlan)).to.deep.equal(["user_by_time"]);
    expect(explained.executionStats.totalDocsExamined).to.equal(11);
    const page = await repository.list(scope, USERS[1]!, { limit: 3, after: null });
    expect(page.items.map((t) => t.id)).to.deep.equal(["txn_index_0397", "txn_index_0393", "txn_index_0389"]);
    const next = await repository.list(scope, USERS[1]!, { limit: 2, after: page.items[2]! });
    expect(next.items.map((t) => t.id)).to.deep.equal(["txn_index_0385", "txn_index_0381"]);
  });

  it("answers the dashboard's overview of a tenant from tenant_by_time: its latest, reading only those, and its week", async () => {
    const queries = new ConsoleQueries(database.db);
    const latest = database.db
      .collection<TransactionDocument>("transactions")
      .find({ project_id: scope.projectId, livemode: scope.livemode })
      .sort({ created_at: -1, _id: -1 })
      .limit(5);
    const explained = (await latest.explain("executionStats")) as Document;
    expect(indexScans(explained.queryPlanner.winningPlan)).to.deep.equal(["tenant_by_time"]);
    expect(explained.executionStats.totalDocsExamined).to.equal(5);
    const activity = await queries.recentActivity(scope, 3);
    expect(activity.transactions.map((t: { _id: string }) => t._id)).to.deep.equal(["txn_index_0399", "txn_index_0398", "txn_index_0397"]);
    const week = (await database.db
      .collection<TransactionDocument>("transactions")
      .find({ project_id: scope.projectId, livemode: scope.livemode, status: "completed", created_at: { $gte: new Date(START + 390_000) } })
      .explain("executionStats")) as Document;
    expect(indexScans(week.queryPlanner.winningPlan)).to.deep.equal(["tenant_by_time"]);
    expect(week.executionStats.totalKeysExamined).to.equal(10);
  });

  it("lists a user's transactions of the caller's environment alone", async () => {
    const live = await repository.list({ ...scope, livemode: true }, USERS[0]!, { limit: 10, after: null });
    expect(live.items.map((t) => t.id)).to.deep.equal(["txn_index_live"]);
    const test = await repository.list(scope, USERS[0]!, { limit: 200, after: null });
    expect(test.items).to.have.length(100);
    expect(test.items.every((t) => !t.livemode)).to.equal(true);
  });

  it("replaces the index that earlier versions made (led by the tenant; time and id descending)", async () => {
    const earlier = await freshDatabase("transaction_indexes_earlier");
    try {
      const collection = earlier.db.collection("transactions");
      await collection.createIndex({ project_id: 1, livemode: 1, user_id: 1, created_at: -1, _id: -1 }, { name: "user_newest_first" });
      await new TransactionRepository(earlier.db).ensureIndexes();
      await new TransactionRepository(earlier.db).ensureIndexes();
      expect((await collection.indexes()).map((index) => index.name).sort()).to.deep.equal(["_id_", "tenant_by_time", "user_by_time"]);
    } finally {
      await earlier.close();
    }
  });
});
