// The `transactions` projection of a move: when it holds the version the move started from, it gets only the fields
// that differ (one statement shared with the projections of concurrent moves); otherwise (not projected yet, a later
// version, an earlier one) the whole record is written unless a later version is there, as for any projection.
import { expect } from "chai";
import { type Collection, MongoClient } from "mongodb";
import { type TransactionDocument, type TransactionRecord, TransactionRepository } from "../../src/store/transaction-repository.ts";
import { freshDatabaseUri } from "../support/database.ts";
import { transactionRecord } from "../support/transaction-records.ts";

function opened(id: string): TransactionRecord {
  return transactionRecord({
    id,
    project_id: "proj_projection",
    user_id: "usr_projection0000000000001",
    wallet_id: "wal_projection",
    type: "withdrawal",
    fee_cents: 25,
    description: "rent",
  });
}

/** `from` moved to `status`, as LedgerWriter.moved makes it (a spread: unchanged fields keep their values). */
function moved(from: TransactionRecord, status: TransactionRecord["status"], extra: Partial<TransactionRecord> = {}): TransactionRecord {
  return { ...from, status, updated_at: new Date(from.updated_at.getTime() + 1000), version: from.version + 1, moved_by: null, ...extra };
}

describe("TransactionRepository projections of moves", () => {
  let client: MongoClient;
  let collection: Collection<TransactionDocument>;
  let transactions: TransactionRepository;
  /** The statements of each update command sent to `transactions`. */
  const updates: unknown[][] = [];

  before(async () => {
    client = new MongoClient(await freshDatabaseUri("transaction_projection"), { monitorCommands: true });
    client.on("commandStarted", (e) => {
      if (e.commandName === "update" && e.command.update === "transactions") updates.push(e.command.updates as unknown[]);
    });
    await client.connect();
    collection = client.db().collection<TransactionDocument>("transactions");
    transactions = new TransactionRepository(client.db());
    await transactions.ensureIndexes();
  });
  after(() => client.close());
  beforeEach(() => {
    updates.length = 0;
  });

  const stored = async (id: string) => {
    const { _id, ...rest } = (await collection.findOne({ _id: id }))!;
    return { id: _id, ...rest };
  };

  it("writes only the changed fields when the projection holds the version moved from", async () => {
    const first = opened("txn_projection_changed_only");
    await transactions.project(first, "new");
    const processing = moved(first, "processing");
    await transactions.project(processing, first);
    expect(await stored(first.id)).to.deep.equal(processing);
    expect(updates).to.have.length(1);
    expect(updates[0]).to.have.length(1);
    expect(updates[0]![0]).to.deep.include({ q: { _id: first.id, version: 1 } });
    const set = (updates[0]![0] as { u: { $set: Record<string, unknown> } }).u.$set;
    expect(Object.keys(set).sort()).to.deep.equal(["moved_by", "status", "updated_at", "version"]);
  });

  it("shares one command between the projections of concurrent moves", async () => {
    const records = ["txn_projection_batch_a", "txn_projection_batch_b", "txn_projection_batch_c"].map(opened);
    await Promise.all(records.map((record) => transactions.project(record, "new")));
    const commandsBefore = updates.length;
    await Promise.all(records.map((record) => transactions.project(moved(record, "processing"), record)));
    expect(updates.length - commandsBefore).to.equal(1);
    expect(updates.at(-1)).to.have.length(3);
    for (const record of records) expect((await stored(record.id)).status).to.equal("processing");
  });

  it("writes the whole record when the projection is missing", async () => {
    const first = opened("txn_projection_missing");
    const processing = moved(first, "processing");
    await transactions.project(processing, first);
    expect(await stored(first.id)).to.deep.equal(processing);
  });

  it("writes the whole record over an earlier version than the one moved from", async () => {
    const first = opened("txn_projection_behind");
    await transactions.project(first, "new");
    const processing = moved(first, "processing");
    const completed = moved(processing, "completed", { moved_by: "stamp" });
    await transactions.project(completed, processing);
    expect(await stored(first.id)).to.deep.equal(completed);
  });

  it("leaves a later version as it is, and a changed-fields batch with it falls back without harm", async () => {
    const first = opened("txn_projection_later");
    const processing = moved(first, "processing");
    const completed = moved(processing, "completed");
    await transactions.project(completed);
    const other = opened("txn_projection_later_other");
    await transactions.project(other, "new");
    const otherProcessing = moved(other, "processing");
    // The first does not match (its projection is at version 3), so the batch is not all applied: both are written whole.
    await Promise.all([transactions.project(processing, first), transactions.project(otherProcessing, other)]);
    expect(await stored(first.id)).to.deep.equal(completed);
    expect(await stored(other.id)).to.deep.equal(otherProcessing);
  });
});
