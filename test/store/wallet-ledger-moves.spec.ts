// Moves of in-flight transactions made at the same moment go to the database in one command; each mover still
// learns whether its own write applied (from the command's match count, or, when some move of the command did not
// match, from the token its write left beside the transaction), so of two movers of one transaction exactly one
// is told it moved it, and only its events and balance change are in the user document.
import { expect } from "chai";
import { MongoClient, type Collection } from "mongodb";
import type { OutboxEvent } from "../../src/store/outbox.ts";
import type { TransactionRecord } from "../../src/store/transaction-repository.ts";
import type { UserDocument } from "../../src/store/user-document.ts";
import { type UserWithLedger, WalletLedgerRepository } from "../../src/store/wallet-ledger.ts";
import { freshDatabaseUri } from "../support/database.ts";
import { transactionRecord } from "../support/transaction-records.ts";

const USER = "usr_walletledgermoves0000001";

function pending(id: string): TransactionRecord {
  return transactionRecord({ id, project_id: "proj_moves", user_id: USER, wallet_id: "wal_moves" });
}

const event = (id: string, type: string): OutboxEvent => ({ id, type, created_at: new Date(), data: {} });

describe("WalletLedgerRepository moves", () => {
  let client: MongoClient;
  let users: Collection<UserWithLedger>;
  let ledger: WalletLedgerRepository;
  const commands: string[] = [];

  before(async () => {
    client = new MongoClient(await freshDatabaseUri("ledger_moves"), { monitorCommands: true });
    client.on("commandStarted", (e) => {
      if (e.commandName === "update" || e.commandName === "findAndModify") commands.push(e.commandName);
    });
    await client.connect();
    users = client.db().collection<UserWithLedger>("users");
    ledger = new WalletLedgerRepository(client.db(), users as unknown as Collection<UserDocument>);
  });
  after(() => client.close());

  /** The user holding `inflight` (deposits of 1000 cents each, pending), with nothing else on its wallet. */
  const insertHolder = (inflight: TransactionRecord[]) =>
    users.insertOne({
      _id: USER,
      project_id: "proj_moves",
      livemode: false,
      outbox: [],
      ledger: {
        available_cents: 0,
        pending_in_cents: 1000 * inflight.length,
        pending_out_cents: 0,
        inflight: Object.fromEntries(inflight.map((record) => [record.id, record])),
        inflight_ids: inflight.map((record) => record.id),
        opens: inflight.length,
        compacted_through: 0,
      },
    } as unknown as UserWithLedger);

  it("sends concurrent moves as one command; of two moves of one transaction exactly one applies, with its events alone", async () => {
    const [a, b] = [pending("txn_movesa000000000000000001"), pending("txn_movesb000000000000000001")];
    await insertHolder([a, b]);
    const moved = (record: TransactionRecord, status: "completed" | "failed") => ({ ...record, status, version: 2, updated_at: new Date() });
    commands.length = 0;
    const [completedA, failedA, completedB] = await Promise.all([
      ledger.transition(USER, a, moved(a, "completed"), { pending_in: -1000, available: 1000 }, [event("evt_a_completed", "transaction.completed")]),
      ledger.transition(USER, a, moved(a, "failed"), { pending_in: -1000 }, [event("evt_a_failed", "transaction.failed")]),
      ledger.transition(USER, b, moved(b, "completed"), { pending_in: -1000, available: 1000 }, [event("evt_b_completed", "transaction.completed")]),
    ]);
    expect(commands, "one update command for the three moves").to.deep.equal(["update"]);
    expect([completedA, failedA].filter(Boolean), "one mover of a is told it moved it").to.have.length(1);
    expect(completedB, "b's move applied").to.equal(true);

    const after = (await users.findOne({ _id: USER }))!;
    const winner = completedA ? "completed" : "failed";
    expect(after.ledger!.inflight[a.id]!.status).to.equal(winner);
    expect(after.ledger!.inflight[b.id]!.status).to.equal("completed");
    expect(after.outbox.map((e) => e.id).sort()).to.deep.equal([completedA ? "evt_a_completed" : "evt_a_failed", "evt_b_completed"].sort());
    expect(after.ledger!.pending_in_cents).to.equal(0);
    expect(after.ledger!.available_cents).to.equal(completedA ? 2000 : 1000);

    // A compaction removes the transaction with its token, and the events it names from the outbox.
    await ledger.compact(USER, [a.id], 2, [completedA ? "evt_a_completed" : "evt_a_failed"]);
    const compacted = (await users.findOne({ _id: USER }))!;
    expect(Object.keys(compacted.ledger!.inflight)).to.deep.equal([b.id]);
    expect(Object.keys(compacted.ledger!.moves ?? {})).to.deep.equal([b.id]);
    expect(compacted.ledger!.inflight_ids).to.deep.equal([b.id]);
    expect(compacted.outbox.map((e) => e.id)).to.deep.equal(["evt_b_completed"]);
    expect(compacted.ledger!.compacted_through).to.equal(2);
  });

  it("leaves the moved record in the ledger exactly as the mover made it, fields added or removed included", async () => {
    await users.deleteMany({});
    const from = { ...pending("txn_movesc000000000000000001"), description: "before", reference: "ref_1" };
    await insertHolder([from]);
    const { reference: _dropped, ...rest } = from;
    const next = {
      ...rest,
      status: "failed",
      failure_code: "x",
      failure_message: "y",
      version: 2,
      updated_at: new Date("2026-01-02T00:00:00Z"),
      moved_by: "stamp",
    };
    expect(await ledger.transition(USER, from, next as TransactionRecord, { pending_in: -1000 }, [])).to.equal(true);
    const stored = (await users.findOne({ _id: USER }))!.ledger!.inflight[from.id]!;
    expect(stored).to.deep.equal(next);
  });
});
