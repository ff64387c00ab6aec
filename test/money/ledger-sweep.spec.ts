// The ledger's sweep (src/ledger/ledger-sweep.ts) finishes what a process that stopped after a ledger write left
// undone: the projection of a transaction in flight, the compaction of a settled one. A process's first sweep looks
// at every user with a transaction in flight; the next ones only at users whose last ledger write is stale and
// later than the window before (so a transaction waiting for days is not read again every few seconds), and a full
// sweep every ten minutes is the backstop. Windows and full sweeps read the users in flight from their own index.
import { expect } from "chai";
import type { Collection, Db, Document } from "mongodb";
import { LedgerSweep } from "../../src/ledger/ledger-sweep.ts";
import type { JobQueue } from "../../src/jobs/job-queue.ts";
import { TransactionRepository, type TransactionRecord } from "../../src/store/transaction-repository.ts";
import { UserRepository } from "../../src/store/user-repository.ts";
import type { UserDocument } from "../../src/store/user-document.ts";
import { type UserWithLedger, WalletLedgerRepository } from "../../src/store/wallet-ledger.ts";
import type { Database } from "../../src/store/database.ts";
import { connectDatabase } from "../../src/store/database.ts";
import { freshDatabase, freshDatabaseUri } from "../support/database.ts";
import { indexScans } from "../support/index-scans.ts";
import { transactionRecord } from "../support/transaction-records.ts";

const STALE_MS = 10_000;
const START = Date.parse("2026-03-01T12:00:00Z");

function record(id: string, userId: string, status: TransactionRecord["status"], at: Date, version: number): TransactionRecord {
  return transactionRecord({
    id,
    project_id: "proj_sweep",
    user_id: userId,
    amount_cents: 500,
    fiat_amount_minor: 500,
    status,
    created_at: new Date(START - 3_600_000),
    updated_at: at,
    version,
  });
}

/** A user document holding `inflight` in its ledger, its last ledger write at `writtenAt`. */
function userHolding(userId: string, inflight: TransactionRecord[], writtenAt: Date): UserWithLedger {
  return {
    _id: userId,
    project_id: "proj_sweep",
    livemode: false,
    outbox: [],
    ledger: {
      available_cents: 0,
      pending_in_cents: 0,
      pending_out_cents: 0,
      inflight: Object.fromEntries(inflight.map((r) => [r.id, r])),
      inflight_ids: inflight.map((r) => r.id),
      opens: inflight.length,
      compacted_through: 0,
      updated_at: writtenAt,
    },
  } as unknown as UserWithLedger;
}

describe("The ledger's sweep", () => {
  let database: Database;
  let db: Db;
  let users: Collection<UserWithLedger>;
  let transactions: TransactionRepository;
  let now = START;
  let sweep: LedgerSweep;

  /** A user holding `inflight`, its last ledger write at `writtenAt`, as a process that stopped after it left it. */
  async function plant(userId: string, inflight: TransactionRecord[], writtenAt: Date): Promise<void> {
    await users.insertOne(userHolding(userId, inflight, writtenAt));
  }

  before(async () => {
    database = await freshDatabase("ledger_sweep");
    db = database.db;
    users = db.collection<UserWithLedger>("users");
    transactions = new TransactionRepository(db);
    sweep = new LedgerSweep({
      wallets: new WalletLedgerRepository(db, users as unknown as Collection<UserDocument>),
      transactions,
      jobs: {} as JobQueue,
      clock: () => new Date(now),
    });
  });
  after(() => database.close());

  it("first looks at every user in flight: projects what was not projected and compacts what settled", async () => {
    const old = new Date(START - 3_600_000);
    await plant("usr_sweep_pending", [record("txn_sweep_pending", "usr_sweep_pending", "pending", old, 1)], old);
    await plant("usr_sweep_settled", [record("txn_sweep_settled", "usr_sweep_settled", "completed", old, 2)], old);
    await plant("usr_sweep_fresh", [record("txn_sweep_fresh", "usr_sweep_fresh", "pending", new Date(START - 1000), 1)], new Date(START - 1000));

    expect(await sweep.sweep(STALE_MS)).to.equal(2);
    expect((await transactions.findById("txn_sweep_pending"))?.status).to.equal("pending");
    expect((await transactions.findById("txn_sweep_settled"))?.status).to.equal("completed");
    expect(await transactions.findById("txn_sweep_fresh"), "not stale yet").to.equal(null);
    const settled = await users.findOne({ _id: "usr_sweep_settled" });
    expect(settled?.ledger?.inflight_ids).to.deep.equal([]);
    expect(settled?.ledger?.inflight).to.deep.equal({});
  });

  it("then looks only at users whose last write became stale since the window before, until the next full sweep", async () => {
    // Written (and left unprojected) before the last window: the next sweeps do not read it again...
    const before = new Date(START - 3_600_000);
    await plant("usr_sweep_missed", [record("txn_sweep_missed", "usr_sweep_missed", "pending", before, 1)], before);
    now = START + STALE_MS;
    // ...while the fresh one of the first test became stale in this window, and the long-pending one is not read.
    expect(await sweep.sweep(STALE_MS)).to.equal(1);
    expect((await transactions.findById("txn_sweep_fresh"))?.status).to.equal("pending");
    expect(await transactions.findById("txn_sweep_missed")).to.equal(null);

    now = START + 10 * 60_000;
    expect(await sweep.sweep(STALE_MS), "the full sweep looks at every user in flight again").to.equal(3);
    expect((await transactions.findById("txn_sweep_missed"))?.status).to.equal("pending");
  });
});

describe("The ledger's sweep, with the users collection's indexes", () => {
  let database: Database;
  let users: Collection<UserWithLedger>;
  let transactions: TransactionRepository;
  let now = START;
  let sweep: LedgerSweep;
  /** Users planted so far (each gets a phone of its own: the phone is unique in a project). */
  let planted = 0;

  /** The finds sent to the users collection, as the driver sent them. */
  const usersFinds: Document[] = [];

  before(async () => {
    database = await connectDatabase(await freshDatabaseUri("ledger_sweep_indexed"), { monitorCommands: true });
    database.client.on("commandStarted", (started) => {
      if (started.commandName === "find" && started.command.find === "users") usersFinds.push(started.command);
    });
    const repository = new UserRepository(database.db);
    await repository.ensureIndexes();
    users = database.db.collection<UserWithLedger>("users");
    transactions = new TransactionRepository(database.db);
    sweep = new LedgerSweep({ wallets: repository.ledger, transactions, jobs: {} as JobQueue, clock: () => new Date(now) });
  });
  after(() => database.close());

  /** `count` users, each holding one pending transaction, their last ledger write at `writtenAt` (or none in flight). */
  async function plant(prefix: string, count: number, writtenAt: Date, inFlight = true): Promise<void> {
    await users.insertMany(
      Array.from({ length: count }, (_, i) => {
        const id = `usr_${prefix}_${String(i).padStart(4, "0")}`;
        const inflight = inFlight ? [record(`txn_${prefix}_${i}`, id, "pending", writtenAt, 1)] : [];
        return { ...userHolding(id, inflight, writtenAt), phone: `+1555${String((planted += 1)).padStart(7, "0")}` };
      }),
    );
  }

  it("reads a window's users from their index, past more than a page written at the same moment", async () => {
    expect(await sweep.sweep(STALE_MS), "the first, full sweep finds nobody").to.equal(0);
    // 250 users written at one moment in the next window (more than two pages of 100), and around them users the
    // window leaves out: written before it, and written in it with nothing in flight.
    const inWindow = new Date(START);
    await plant("same", 250, inWindow);
    await plant("earlier", 30, new Date(START - 3_600_000));
    await plant("settled", 300, inWindow, false);
    now = START + STALE_MS;
    expect(await sweep.sweep(STALE_MS)).to.equal(250);
    expect((await transactions.findById("txn_same_249"))?.status).to.equal("pending");
    expect(await transactions.findById("txn_earlier_0")).to.equal(null);

    const explained = (await users
      .find({ "ledger.inflight_ids.0": { $exists: true }, "ledger.updated_at": { $gt: new Date(START - 1), $lte: inWindow } })
      .sort({ "ledger.updated_at": 1, _id: 1 })
      .limit(100)
      .explain("executionStats")) as Document;
    expect(indexScans(explained.queryPlanner.winningPlan)).to.deep.equal(["ledger_written"]);
    expect(explained.executionStats.totalDocsExamined).to.equal(100);
  });

  it("reads a full sweep's users from the same index, every user in flight and no other", async () => {
    // A process's first sweep is full: the users in flight of the test above (250 in the window, 30 before it) and
    // 150 more, among the 300 with nothing in flight.
    await plant("bulk", 150, new Date(START - 7_200_000));
    usersFinds.length = 0;
    const fresh = new LedgerSweep({
      wallets: new UserRepository(database.db).ledger,
      transactions,
      jobs: {} as JobQueue,
      clock: () => new Date(now),
    });
    expect(await fresh.sweep(STALE_MS)).to.equal(430);
    expect((await transactions.findById("txn_bulk_149"))?.status).to.equal("pending");
    expect((await transactions.findById("txn_earlier_29"))?.status).to.equal("pending");

    // Each read the full sweep made went through the index and examined no user beyond its page.
    expect(usersFinds.length).to.be.at.least(5);
    for (const { find, filter, sort, limit, projection } of usersFinds) {
      const explained = await database.db.command({ explain: { find, filter, sort, limit, projection }, verbosity: "executionStats" });
      expect(indexScans(explained.queryPlanner.winningPlan), JSON.stringify(filter)).to.deep.equal(["ledger_written"]);
      expect(explained.executionStats.totalDocsExamined, JSON.stringify({ filter, plan: explained.queryPlanner.winningPlan })).to.be.at.most(limit);
    }
  });
});
