import { expect } from "chai";
import { Long, MongoClient, type ClientSession, type Document } from "mongodb";
import { transactionCommands } from "../../src/embedded-mongo/commands/transactions.ts";
import { failure, useReplicaSet, waitFor } from "./helpers.ts";

interface Account {
  _id: number;
  balance?: number;
  other?: boolean;
}

describe("embedded-mongo: multi-document transactions (replica set)", function () {
  this.timeout(20000);
  // A short cursor timeout: the server's sweep (cursors, sessions, transactions) runs every second.
  const rs = useReplicaSet("txn", { server: { cursorTimeoutMs: 2000 } });
  const sessions: ClientSession[] = [];
  const session = () => {
    const s = rs.client.startSession();
    sessions.push(s);
    return s;
  };
  afterEach(async () => {
    for (const s of sessions.splice(0)) await s.endSession();
  });
  const accounts = () => rs.db.collection<Account>("accounts");

  beforeEach(async () => {
    await accounts().insertMany([
      { _id: 1, balance: 100 },
      { _id: 2, balance: 50 },
    ]);
  });

  it("writes are seen by the transaction at once and by others only after the commit", async () => {
    const s = session();
    s.startTransaction();
    await accounts().updateOne({ _id: 1 }, { $inc: { balance: -30 } }, { session: s });
    await accounts().updateOne({ _id: 2 }, { $inc: { balance: 30 } }, { session: s });
    await accounts().insertOne({ _id: 3, balance: 0 }, { session: s });
    expect(await accounts().find({}, { session: s }).sort({ _id: 1 }).toArray()).to.deep.equal([
      { _id: 1, balance: 70 },
      { _id: 2, balance: 80 },
      { _id: 3, balance: 0 },
    ]);
    // Outside: the state before the transaction, through a query, an index scan and a count.
    expect(await accounts().find().sort({ _id: 1 }).toArray()).to.deep.equal([
      { _id: 1, balance: 100 },
      { _id: 2, balance: 50 },
    ]);
    expect(await accounts().countDocuments({ balance: { $gte: 0 } })).to.equal(2);
    await s.commitTransaction();
    expect(await accounts().find().sort({ _id: 1 }).toArray()).to.deep.equal([
      { _id: 1, balance: 70 },
      { _id: 2, balance: 80 },
      { _id: 3, balance: 0 },
    ]);
  });

  it("reads inside a transaction see its snapshot: a commit by someone else after its first statement is not seen", async () => {
    const s = session();
    s.startTransaction();
    expect(await accounts().findOne({ _id: 1 }, { session: s })).to.deep.equal({ _id: 1, balance: 100 });
    await accounts().updateOne({ _id: 2 }, { $set: { balance: 0 } });
    await accounts().insertOne({ _id: 9, balance: 1 });
    expect(await accounts().find({}, { session: s }).sort({ _id: 1 }).toArray()).to.deep.equal([
      { _id: 1, balance: 100 },
      { _id: 2, balance: 50 },
    ]);
    expect(await accounts().distinct("balance", {}, { session: s })).to.deep.equal([50, 100]);
    await s.commitTransaction();
    expect(await accounts().countDocuments()).to.equal(3);
  });

  it("abortTransaction drops the writes", async () => {
    const s = session();
    s.startTransaction();
    await accounts().deleteMany({}, { session: s });
    await rs.db.collection<Account>("other").insertOne({ _id: 1 }, { session: s });
    expect(await accounts().countDocuments({}, { session: s })).to.equal(0);
    await s.abortTransaction();
    expect(await accounts().countDocuments()).to.equal(2);
    expect(await rs.db.listCollections({ name: "other" }).toArray()).to.deep.equal([]);
  });

  it("two transactions writing one document: the second answers WriteConflict (TransientTransactionError) and is aborted", async () => {
    const a = session();
    const b = session();
    a.startTransaction();
    b.startTransaction();
    await accounts().updateOne({ _id: 1 }, { $inc: { balance: 1 } }, { session: a });
    const conflict = await failure(accounts().updateOne({ _id: 1 }, { $inc: { balance: 2 } }, { session: b }));
    expect(conflict.code).to.equal(112);
    expect(conflict.codeName).to.equal("WriteConflict");
    expect(conflict.errorLabels).to.include("TransientTransactionError");
    await a.commitTransaction();
    const gone = await failure(b.commitTransaction());
    expect(gone.code).to.equal(251);
    expect(gone.errorLabels).to.include("TransientTransactionError");
    expect(await accounts().findOne({ _id: 1 })).to.deep.equal({ _id: 1, balance: 101 });
  });

  it("a write to a document changed by a commit after the transaction's snapshot answers WriteConflict", async () => {
    const s = session();
    s.startTransaction();
    await accounts().findOne({ _id: 1 }, { session: s });
    await accounts().updateOne({ _id: 1 }, { $set: { balance: 7 } });
    const conflict = await failure(accounts().updateOne({ _id: 1 }, { $inc: { balance: 1 } }, { session: s }));
    expect(conflict.code).to.equal(112);
    await s.abortTransaction();
    expect(await accounts().findOne({ _id: 1 })).to.deep.equal({ _id: 1, balance: 7 });
  });

  it("a commit after someone else changed a document the transaction wrote answers WriteConflict and applies nothing", async () => {
    const s = session();
    s.startTransaction();
    await accounts().insertOne({ _id: 5 }, { session: s });
    await accounts().updateOne({ _id: 1 }, { $set: { balance: 0 } }, { session: s });
    await accounts().updateOne({ _id: 1 }, { $set: { balance: 1 } });
    const conflict = await failure(s.commitTransaction());
    expect(conflict.code).to.equal(112);
    expect(conflict.errorLabels).to.include("TransientTransactionError");
    expect(await accounts().find().sort({ _id: 1 }).toArray()).to.deep.equal([
      { _id: 1, balance: 1 },
      { _id: 2, balance: 50 },
    ]);
  });

  it("a commit meeting a unique key another commit took meanwhile undoes what it applied and answers WriteConflict", async () => {
    const keyed = rs.db.collection<{ _id: number; k: number }>("keyed");
    await keyed.createIndex({ k: 1 }, { unique: true });
    const s = session();
    s.startTransaction();
    await accounts().updateOne({ _id: 1 }, { $set: { balance: 0 } }, { session: s });
    await keyed.insertOne({ _id: 1, k: 1 }, { session: s });
    await keyed.insertOne({ _id: 2, k: 1 });
    const conflict = await failure(s.commitTransaction());
    expect(conflict.code).to.equal(112);
    expect(await accounts().findOne({ _id: 1 })).to.deep.equal({ _id: 1, balance: 100 });
    expect(await keyed.find().toArray()).to.deep.equal([{ _id: 2, k: 1 }]);
  });

  it("a failed statement aborts the transaction: a duplicate key is a command error, the commit then NoSuchTransaction", async () => {
    const s = session();
    s.startTransaction();
    await accounts().insertOne({ _id: 7 }, { session: s });
    const dup = await failure(accounts().insertOne({ _id: 1 }, { session: s }));
    expect(dup.code).to.equal(11000);
    expect(dup.errorLabels ?? []).to.not.include("TransientTransactionError");
    const commit = await failure(s.commitTransaction());
    expect(commit.code).to.equal(251);
    expect(await accounts().countDocuments()).to.equal(2);
  });

  it("session.withTransaction commits, and runs its callback again after a transient error", async () => {
    const s = session();
    let attempts = 0;
    await s.withTransaction(async () => {
      attempts++;
      await accounts().updateOne({ _id: 1 }, { $inc: { balance: -10 } }, { session: s });
      // The first attempt meets a concurrent commit on the same document: WriteConflict, retried by the driver.
      if (attempts === 1) await accounts().updateOne({ _id: 2 }, { $inc: { balance: 5 } });
      await accounts().updateOne({ _id: 2 }, { $inc: { balance: 10 } }, { session: s });
    });
    expect(attempts).to.equal(2);
    expect(await accounts().find().sort({ _id: 1 }).toArray()).to.deep.equal([
      { _id: 1, balance: 90 },
      { _id: 2, balance: 65 },
    ]);
  });

  describe("as raw commands", () => {
    let raw: MongoClient;
    let s: ClientSession;
    let txnNumber = 0;
    const run = (cmd: Document, db = "txn") => raw.db(db).command(cmd, { session: s });
    const start = (cmd: Document) => run({ ...cmd, txnNumber: Long.fromNumber(++txnNumber), autocommit: false, startTransaction: true });
    const next = (cmd: Document, db = "txn") => run({ ...cmd, txnNumber: Long.fromNumber(txnNumber), autocommit: false }, db);
    // The driver gives commitTransaction and abortTransaction its session's own txnNumber: set it to ours.
    const asDriverNumber = () => {
      (s as unknown as { serverSession: { txnNumber: number } }).serverSession.txnNumber = txnNumber;
    };
    const commit = (extra: Document = {}) => {
      asDriverNumber();
      return next({ commitTransaction: 1, ...extra }, "admin");
    };
    const abort = () => {
      asDriverNumber();
      return next({ abortTransaction: 1 }, "admin");
    };

    beforeEach(async () => {
      // Its own client and an explicit session: the driver sends the session's lsid and adds no transaction fields
      // (nor, without causal consistency, a readConcern).
      raw = new MongoClient(rs.mongo.uri);
      s = raw.startSession({ causalConsistency: false });
    });
    afterEach(async () => {
      await s.endSession();
      await raw.close();
    });

    it("commitTransaction is retryable: a repeated commit answers the same; abort after it answers 256, commit after abort 251", async () => {
      await start({ insert: "accounts", documents: [{ _id: 3 }] });
      expect(await commit()).to.include({ ok: 1 });
      expect(await commit()).to.include({ ok: 1 });
      expect(await accounts().countDocuments()).to.equal(3);
      const late = await failure(abort());
      expect(late.code).to.equal(256);
      expect(late.codeName).to.equal("TransactionCommitted");
      const statement = await failure(next({ find: "accounts" }));
      expect(statement.code).to.equal(256);

      await start({ insert: "accounts", documents: [{ _id: 4 }] });
      expect(await abort()).to.include({ ok: 1 });
      const afterAbort = await failure(commit());
      expect(afterAbort.code).to.equal(251);
      expect(afterAbort.errorLabels).to.include("TransientTransactionError");
      expect(await accounts().countDocuments()).to.equal(3);
    });

    it("an unknown or older txnNumber: 251 NoSuchTransaction with the label, 225 TransactionTooOld", async () => {
      const unknown = await failure(run({ find: "accounts", txnNumber: Long.fromNumber(500), autocommit: false }));
      expect(unknown.code).to.equal(251);
      expect(unknown.errorLabels).to.include("TransientTransactionError");
      await start({ find: "accounts" });
      await start({ find: "accounts" });
      const old = await failure(run({ find: "accounts", txnNumber: Long.fromNumber(txnNumber - 1), autocommit: false }));
      expect(old.code).to.equal(225);
      await abort();
    });

    it("refuses what mongod refuses in a transaction", async () => {
      await start({ find: "accounts" });
      const readConcern = await failure(next({ find: "accounts", readConcern: { level: "local" } }));
      expect(readConcern.code).to.equal(72);
      expect(readConcern.errmsg).to.equal("Only the first command in a transaction may specify a readConcern");
      await start({ find: "accounts" });
      const writeConcern = await failure(next({ insert: "accounts", documents: [{}], writeConcern: { w: 1 } }));
      expect(writeConcern.errmsg).to.equal("Cannot set write concern after starting a transaction.");
      for (const cmd of [{ count: "accounts" }, { drop: "accounts" }, { listCollections: 1 }]) {
        const refused = await failure(next(cmd));
        expect(refused.code, JSON.stringify(cmd)).to.equal(263);
        expect(refused.codeName).to.equal("OperationNotSupportedInTransaction");
      }
      const out = await failure(next({ aggregate: "accounts", pipeline: [{ $out: "copy" }], cursor: {} }));
      expect(out.code).to.equal(263);
      const level = await failure(start({ find: "accounts", readConcern: { level: "linearizable" } }));
      expect(level.code).to.equal(72);
      const autocommit = await failure(run({ find: "accounts", txnNumber: Long.fromNumber(++txnNumber), autocommit: true }));
      expect(autocommit.errmsg).to.equal("Specifying autocommit=true is not allowed.");
      const noAutocommit = await failure(run({ find: "accounts", txnNumber: Long.fromNumber(++txnNumber), startTransaction: true }));
      expect(noAutocommit.errmsg).to.equal("'startTransaction' field requires 'autocommit' field to also be specified");
      const notStarting = await failure(
        run({ find: "accounts", txnNumber: Long.fromNumber(++txnNumber), autocommit: false, startTransaction: false }),
      );
      expect(notStarting.errmsg).to.equal("Specifying startTransaction=false is not allowed.");
      const noNumber = await failure(run({ find: "accounts", autocommit: false }));
      expect(noNumber.errmsg).to.equal("'autocommit' field requires a transaction number to also be specified");
      await start({ find: "accounts" });
      const again = await failure(run({ find: "accounts", txnNumber: Long.fromNumber(txnNumber), autocommit: false, startTransaction: true }));
      expect(again.code).to.equal(50911);
      const index = await failure(start({ createIndexes: "accounts", indexes: [{ key: { balance: 1 }, name: "b" }] }));
      expect(index.code).to.equal(263);
    });

    it("creates a collection and its index inside the transaction, both visible after the commit", async () => {
      await start({ create: "fresh" });
      await next({ createIndexes: "fresh", indexes: [{ key: { k: 1 }, name: "k_1", unique: true }] });
      await next({ insert: "fresh", documents: [{ k: 1 }] });
      const dup = await failure(next({ insert: "fresh", documents: [{ k: 1 }] }));
      expect(dup.code).to.equal(11000);
      await start({ create: "fresh" });
      await next({ createIndexes: "fresh", indexes: [{ key: { k: 1 }, name: "k_1", unique: true }] });
      await next({ insert: "fresh", documents: [{ k: 1 }] });
      expect(await rs.db.listCollections({ name: "fresh" }).toArray()).to.deep.equal([]);
      await commit();
      expect((await rs.db.collection("fresh").indexes()).map((i) => i.name)).to.deep.equal(["_id_", "k_1"]);
      expect(await rs.db.collection("fresh").countDocuments()).to.equal(1);
    });

    it("readConcern snapshot with atClusterTime reads at that time", async () => {
      const hello = await rs.db.command({ insert: "accounts", documents: [{ _id: 3 }] });
      const at = hello.operationTime;
      await accounts().deleteMany({});
      const read = await start({ find: "accounts", sort: { _id: 1 }, readConcern: { level: "snapshot", atClusterTime: at } });
      expect(read.cursor.firstBatch.map((d: Document) => d._id)).to.deep.equal([1, 2, 3]);
      await commit();
    });

    it("killSessions, killAllSessions and endSessions abort the sessions' open transactions", async () => {
      const admin = rs.client.db("admin");
      for (const kill of [{ killSessions: [s.id] }, { killAllSessions: [] }, { endSessions: [s.id] }]) {
        await start({ insert: "accounts", documents: [{ _id: 3 }] });
        await admin.command(kill);
        const gone = await failure(next({ find: "accounts" }));
        expect(gone.code, JSON.stringify(Object.keys(kill))).to.equal(251);
        expect(gone.errmsg).to.match(/session was (killed|ended)/);
      }
      expect(await accounts().countDocuments()).to.equal(2);
      expect((await failure(admin.command({ killAllSessions: 1 }))).code).to.equal(14);
    });

    it("commitTransaction's write concern: w beyond the set's one member or an unknown mode answers a writeConcernError", async () => {
      await start({ insert: "accounts", documents: [{ _id: 3 }] });
      // The driver raises a reply's writeConcernError as an error.
      const many = await failure(commit({ writeConcern: { w: 3 } }));
      expect(many.code).to.equal(100);
      expect(many.message).to.equal("Not enough data-bearing nodes");
      await start({ insert: "accounts", documents: [{ _id: 4 }] });
      const tag = await failure(commit({ writeConcern: { w: "dc" } }));
      expect(tag.code).to.equal(79);
      expect(await accounts().countDocuments()).to.equal(4);
    });

    it("transactionLifetimeLimitSeconds (setParameter) aborts a transaction that runs longer", async () => {
      const admin = rs.client.db("admin");
      expect((await admin.command({ getParameter: 1, transactionLifetimeLimitSeconds: 1 })).transactionLifetimeLimitSeconds).to.equal(60);
      expect((await admin.command({ setParameter: 1, transactionLifetimeLimitSeconds: 1 })).was).to.equal(60);
      try {
        await start({ insert: "accounts", documents: [{ _id: 3 }] });
        await new Promise((r) => setTimeout(r, 1100));
        const expired = await failure(next({ find: "accounts" }));
        expect(expired.code).to.equal(251);
        expect(expired.errmsg).to.match(/transactionLifetimeLimitSeconds/);
        expect(await accounts().countDocuments()).to.equal(2);
      } finally {
        await admin.command({ setParameter: 1, transactionLifetimeLimitSeconds: 60 });
      }
      expect((await failure(admin.command({ setParameter: 1, transactionLifetimeLimitSeconds: 0 }))).code).to.equal(2);
      expect((await failure(admin.command({ setParameter: 1, notAParameter: 1 }))).code).to.equal(72);
      expect((await failure(admin.command({ setParameter: 1 }))).code).to.equal(72);
      expect((await admin.command({ getParameter: "*" })).transactionLifetimeLimitSeconds).to.equal(60);
      expect((await failure(admin.command({ getParameter: 1, notAParameter: 1 }))).code).to.equal(72);
      expect((await failure(rs.db.command({ getParameter: 1, transactionLifetimeLimitSeconds: 1 }))).code).to.equal(13);
    });
  });

  it("a change stream sees the transaction's writes at its commit, each with lsid and txnNumber", async () => {
    const stream = accounts().watch();
    await stream.tryNext();
    const s = session();
    s.startTransaction();
    await accounts().insertOne({ _id: 3 }, { session: s });
    await accounts().deleteOne({ _id: 2 }, { session: s });
    expect(await stream.tryNext()).to.equal(null);
    await s.commitTransaction();
    const events: Document[] = [];
    await waitFor(async () => {
      const e = await stream.tryNext();
      if (e) events.push(e);
      return events.length === 2;
    });
    expect(events.map((e) => e.operationType)).to.deep.equal(["insert", "delete"]);
    const txnNumber = (s as unknown as { serverSession: { txnNumber: number } }).serverSession.txnNumber;
    for (const e of events) {
      expect(e.lsid.id.toString("hex")).to.equal(s.id?.id.toString("hex"));
      expect(Number(e.txnNumber)).to.equal(txnNumber);
    }
    await stream.close();
  });
});

describe("embedded-mongo: commitTransaction and abortTransaction outside a transaction", () => {
  // A driver always sends them with the session's transaction fields; without them mongod answers 125.
  it("answer 125 CommandFailed", () => {
    for (const name of ["commitTransaction", "abortTransaction"] as const) {
      const handler = transactionCommands[name];
      expect(() => handler?.({ [name]: 1 }, {} as never))
        .to.throw(`${name} must be run within a transaction`)
        .with.property("code", 125);
    }
  });
});
