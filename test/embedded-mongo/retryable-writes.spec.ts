import { expect } from "chai";
import { type Binary, Long, MongoClient, UUID, type Document } from "mongodb";
import { startEmbeddedMongo } from "../../src/embedded-mongo/index.ts";
import { checkSessionFields } from "../../src/embedded-mongo/replication/sessions.ts";
import { useReplicaSet } from "./helpers.ts";

describe("embedded-mongo: retryable writes (replica set)", function () {
  this.timeout(20000);
  const rs = useReplicaSet("retry", { dropBeforeEach: false });
  const lsid = () => ({ id: new UUID() as Binary });

  it("applies a write once: the retry with the same lsid and txnNumber answers the stored result", async () => {
    // An explicit session: the driver sends its lsid with each raw command (and adds no txnNumber to them).
    // Its own client, so the driver never reuses this session with txnNumbers of its own.
    const raw = new MongoClient(rs.mongo.uri);
    const session = raw.startSession();
    const run = (cmd: Document) => raw.db("retry").command(cmd, { session });
    const update = { update: "counters", updates: [{ q: { _id: 1 }, u: { $inc: { n: 1 } }, upsert: true }], txnNumber: Long.fromNumber(1) };
    const first = await run(update);
    const retry = await run(update);
    expect(first).to.deep.include({ n: 1, nModified: 0, ok: 1 });
    expect(retry).to.deep.include({ n: 1, nModified: 0, ok: 1 });
    expect(retry.upserted).to.deep.equal(first.upserted);
    expect(await rs.db.collection("counters").findOne({ _id: 1 as never })).to.deep.equal({ _id: 1, n: 1 });

    // The next txnNumber runs; an older one is refused.
    await run({ ...update, txnNumber: Long.fromNumber(2) });
    expect((await rs.db.collection("counters").findOne({ _id: 1 as never }))?.n).to.equal(2);
    const old = await run({ ...update, txnNumber: Long.fromNumber(1) }).catch((e) => e);
    expect(old.code).to.equal(225);
    expect(old.codeName).to.equal("TransactionTooOld");

    const fam = { findAndModify: "counters", query: { _id: 1 }, update: { $inc: { n: 10 } }, new: true, txnNumber: Long.fromNumber(3) };
    const a = await run(fam);
    const b = await run(fam);
    expect(a.value).to.deep.equal({ _id: 1, n: 12 });
    expect(b.value).to.deep.equal({ _id: 1, n: 12 });
    expect((await rs.db.collection("counters").findOne({ _id: 1 as never }))?.n).to.equal(12);
    await session.endSession();
    await raw.close();
  });

  it("the driver's retryWrites path works end to end", async () => {
    const coll = rs.db.collection("driver");
    await coll.insertOne({ a: 1 });
    await coll.updateOne({ a: 1 }, { $set: { b: 2 } });
    expect(await coll.findOne({ a: 1 }, { projection: { _id: 0 } })).to.deep.equal({ a: 1, b: 2 });
  });

  it("refuses txnNumber where mongod does", async () => {
    const notRetryable = await rs.db.command({ find: "tx", txnNumber: Long.fromNumber(1) }).catch((e) => e);
    expect(notRetryable.code).to.equal(50768);
    // The driver always sends an lsid; the server's check for a txnNumber without one, directly:
    const state = { replSet: {} } as never;
    expect(() => checkSessionFields({ insert: "tx", txnNumber: 1 }, "insert", { server: state })).to.throw("requires a session ID");
  });

  it("a standalone refuses any txnNumber", async () => {
    const standalone = await startEmbeddedMongo();
    const c = new MongoClient(standalone.uri);
    try {
      const err = await c
        .db("retry")
        .command({ insert: "x", documents: [{}], lsid: lsid(), txnNumber: Long.fromNumber(1) })
        .catch((e) => e);
      expect(err.code).to.equal(20);
    } finally {
      await c.close();
      await standalone.stop();
    }
  });
});
