import { expect } from "chai";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { MongoClient, type Document } from "mongodb";
import { startCli } from "./cli-process.ts";
import { waitFor } from "./helpers.ts";
import { startEmbeddedMongo } from "../../src/embedded-mongo/index.ts";
import { RecordType } from "../../src/embedded-mongo/durable/durable-records.ts";
import { readRecords } from "../../src/embedded-mongo/durable/record-file.ts";

const TRANSACTIONS = 1000;

/** The driver's server session behind a ClientSession: its lsid and its latest txnNumber. */
interface DriverServerSession {
  id: Document;
  txnNumber: number;
}
const COLLECTIONS = ["orders", "lines", "audit"];

describe("embedded-mongo: a transaction survives kill -9 whole or not at all", function () {
  this.timeout(120_000);
  let dir: string;

  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), "embedded-mongo-txn-"));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it(`kills the server during ${TRANSACTIONS} concurrent transactions; after the restart each is whole or absent, and every acknowledged one is there`, async () => {
    let { child, uri } = await startCli(dir, ["--replSet", "rs0"]);
    const client = new MongoClient(uri.replace("?replicaSet=rs0", "?directConnection=true"), {
      maxPoolSize: 32,
      serverSelectionTimeoutMS: 2000,
    });
    const db = client.db("crash");
    // Collections exist beforehand: each transaction then writes 3 documents into 3 collections.
    for (const name of COLLECTIONS) await db.createCollection(name);
    const acknowledged: number[] = [];
    const transaction = async (n: number) => {
      const session = client.startSession();
      try {
        session.startTransaction();
        for (const name of COLLECTIONS) await db.collection<{ _id: number; txn: number }>(name).insertOne({ _id: n, txn: n }, { session });
        await session.commitTransaction();
        acknowledged.push(n);
      } catch {
        // the server is gone (or the driver gave up on it): this transaction's fate is decided by the restart
      } finally {
        await session.endSession().catch(() => undefined);
      }
    };
    const all = Promise.all(Array.from({ length: TRANSACTIONS }, (_, n) => transaction(n)));
    // Killed while transactions are in flight: after some have committed, at a random moment.
    const started = Date.now();
    while (acknowledged.length < 20 && Date.now() - started < 20_000) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, Math.random() * 200));
    const committedBeforeKill = acknowledged.length;
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    await all;
    await client.close().catch(() => undefined);
    expect(committedBeforeKill).to.be.above(0);
    expect(acknowledged.length, "the kill came before every transaction finished").to.be.below(TRANSACTIONS);

    ({ child, uri } = await startCli(dir));
    const after = new MongoClient(uri);
    try {
      const writes = new Map<number, number>();
      for (const name of COLLECTIONS) {
        for (const doc of await after
          .db("crash")
          .collection<{ _id: number }>(name)
          .find({}, { projection: { _id: 1 } })
          .toArray()) {
          writes.set(doc._id, (writes.get(doc._id) ?? 0) + 1);
        }
      }
      const partial = [...writes].filter(([, count]) => count !== COLLECTIONS.length).map(([n]) => n);
      expect(partial, "transactions found in part").to.deep.equal([]);
      const lost = acknowledged.filter((n) => writes.get(n) !== COLLECTIONS.length);
      expect(lost, `${lost.length} of ${acknowledged.length} acknowledged transactions lost`).to.deep.equal([]);
    } finally {
      await after.close();
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    }
  });

  it("journals a commit as one record, replayed at start-up with its session for change streams", async () => {
    const txnDir = mkdtempSync(path.join(tmpdir(), "embedded-mongo-txn-"));
    try {
      let mongo = await startEmbeddedMongo({ dbPath: txnDir, replSet: "rs0" });
      let client = new MongoClient(mongo.uri);
      const coll = () => client.db("journal").collection<{ _id: number; v?: number }>("c");
      await coll().insertOne({ _id: 1, v: 0 });
      const before = coll().watch();
      await before.tryNext();
      const session = client.startSession();
      session.startTransaction();
      await coll().insertOne({ _id: 2 }, { session });
      await coll().updateOne({ _id: 1 }, { $set: { v: 1 } }, { session });
      await session.commitTransaction();
      const seen: { first?: Document | null } = {};
      await waitFor(async () => (seen.first = await before.tryNext()) !== null);
      expect(seen.first?.operationType).to.equal("insert");
      const resumeAfter = seen.first?._id;
      await before.close();
      const committed = (session as unknown as { serverSession: DriverServerSession }).serverSession;
      const { id: lsid, txnNumber } = committed;
      await session.endSession();
      await client.close();
      await mongo.stop();

      const records = readdirSync(txnDir)
        .filter((f) => f.startsWith("journal."))
        .flatMap((f) => readRecords(path.join(txnDir, f)).records);
      expect(records.filter((r) => r.type === RecordType.Transaction)).to.have.length(1);

      mongo = await startEmbeddedMongo({ dbPath: txnDir, replSet: "rs0" });
      client = new MongoClient(mongo.uri);
      try {
        expect(await coll().find().sort({ _id: 1 }).toArray()).to.deep.equal([{ _id: 1, v: 1 }, { _id: 2 }]);
        // A stream resumed across the restart sees the transaction's second write with its txnNumber.
        const stream = coll().watch([], { resumeAfter });
        const event = await stream.tryNext();
        expect(event?.operationType).to.equal("update");
        expect(Number((event as { txnNumber?: unknown } | null)?.txnNumber)).to.equal(1);
        await stream.close();
        // The commit, retried after the restart (its session and number put on a new session), answers the same.
        const retry = client.startSession();
        const retried = (retry as unknown as { serverSession: DriverServerSession }).serverSession;
        Object.assign(retried, { id: lsid, txnNumber });
        expect(await client.db("admin").command({ commitTransaction: 1 }, { session: retry })).to.include({ ok: 1 });
        await retry.endSession();
      } finally {
        await client.close();
        await mongo.stop();
      }
    } finally {
      rmSync(txnDir, { recursive: true, force: true });
    }
  });
});
