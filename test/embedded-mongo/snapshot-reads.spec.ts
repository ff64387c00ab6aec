import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { MongoClient, Timestamp, type Document } from "mongodb";
import { startEmbeddedMongo } from "../../src/embedded-mongo/index.ts";
import { cursorIdOf, failure, useReplicaSet } from "./helpers.ts";

describe("embedded-mongo: snapshot reads (replica set)", function () {
  this.timeout(20000);
  const rs = useReplicaSet("snapshots");

  beforeEach(async () => {
    await rs.db.collection("acct").insertMany([
      { _id: 1, balance: 100 },
      { _id: 2, balance: 50 },
    ] as Document[]);
  });

  it("a snapshot session keeps reading the data as of its first read, after updates, inserts and deletes", async () => {
    const session = rs.client.startSession({ snapshot: true });
    const acct = rs.db.collection("acct");
    expect(await acct.find({}, { session }).sort({ _id: 1 }).toArray()).to.deep.equal([
      { _id: 1, balance: 100 },
      { _id: 2, balance: 50 },
    ]);
    await acct.updateOne({ _id: 1 } as Document, { $inc: { balance: -30 } });
    await acct.insertOne({ _id: 3, balance: 7 } as Document);
    await acct.deleteOne({ _id: 2 } as Document);
    await acct.replaceOne({ _id: 1 } as Document, { other: true });

    // The snapshot session: the old state, through find, aggregate, distinct and countDocuments.
    expect(await acct.find({}, { session }).sort({ _id: 1 }).toArray()).to.deep.equal([
      { _id: 1, balance: 100 },
      { _id: 2, balance: 50 },
    ]);
    expect(await acct.find({ balance: { $gte: 60 } }, { session }).toArray()).to.deep.equal([{ _id: 1, balance: 100 }]);
    expect(await acct.aggregate([{ $group: { _id: null, total: { $sum: "$balance" } } }], { session }).toArray()).to.deep.equal([
      { _id: null, total: 150 },
    ]);
    expect(await acct.distinct("balance", {}, { session })).to.deep.equal([50, 100]);
    expect(await acct.countDocuments({}, { session })).to.equal(2);
    await session.endSession();

    // Without a session: the current state.
    expect(await acct.find().sort({ _id: 1 }).toArray()).to.deep.equal([
      { _id: 1, other: true },
      { _id: 3, balance: 7 },
    ]);
  });

  it("a reply carries atClusterTime, and reads at an explicit atClusterTime see that moment; getMore continues there", async () => {
    const first = await rs.db.command({ find: "acct", filter: {}, sort: { _id: 1 }, batchSize: 1, readConcern: { level: "snapshot" } });
    const at = first.cursor.atClusterTime as Timestamp;
    expect(at).to.be.instanceOf(Timestamp);
    await rs.db.collection("acct").updateMany({}, { $set: { balance: 0 } });

    const read = await rs.db.command({
      find: "acct",
      filter: {},
      sort: { _id: 1 },
      batchSize: 1,
      readConcern: { level: "snapshot", atClusterTime: at },
    });
    expect(read.cursor.atClusterTime.equals(at)).to.equal(true);
    expect(read.cursor.firstBatch).to.deep.equal([{ _id: 1, balance: 100 }]);
    const more = await rs.db.command({ getMore: cursorIdOf(read), collection: "acct" });
    expect(more.cursor.nextBatch).to.deep.equal([{ _id: 2, balance: 50 }]);

    const distinct = await rs.db.command({ distinct: "acct", key: "balance", readConcern: { level: "snapshot", atClusterTime: at } });
    expect(distinct.values).to.deep.equal([50, 100]);
    expect(distinct.atClusterTime.equals(at)).to.equal(true);
    // A pinned session reads there too.
    const session = rs.client.startSession({ snapshot: true });
    (session as unknown as { snapshotTime: Timestamp }).snapshotTime = at;
    expect((await rs.db.collection("acct").findOne({ _id: 2 } as Document, { session }))?.balance).to.equal(50);
    await session.endSession();
  });

  it("refuses a time older than the kept history (239 SnapshotTooOld) and one in the future (72)", async () => {
    const now = (await rs.db.command({ ping: 1 })).operationTime as Timestamp;
    const old = new Timestamp({ t: now.high - 3600, i: 1 });
    const tooOld = await failure(rs.db.command({ find: "acct", readConcern: { level: "snapshot", atClusterTime: old } }));
    expect(tooOld).to.include({ code: 239, codeName: "SnapshotTooOld" });
    expect(tooOld.message).to.match(/^Read timestamp Timestamp\(\d+, 1\) is older than the oldest available timestamp\.$/);

    const future = new Timestamp({ t: now.high + 3600, i: 1 });
    const err = await failure(rs.db.command({ find: "acct", readConcern: { level: "snapshot", atClusterTime: future } }));
    expect(err.code).to.equal(72);
    expect(err.message).to.match(/atClusterTime value must not be greater than the current clusterTime/);
  });

  it("refuses snapshot reads of a collection created or dropped after the snapshot (246 SnapshotUnavailable)", async () => {
    const at = (await rs.db.command({ find: "acct", readConcern: { level: "snapshot" } })).cursor.atClusterTime as Timestamp;
    await rs.db.collection("later").insertOne({ _id: 1 } as Document);
    const err = await failure(rs.db.command({ find: "later", readConcern: { level: "snapshot", atClusterTime: at } }));
    expect(err).to.include({ code: 246, codeName: "SnapshotUnavailable" });
    // A collection untouched since then reads as it is.
    const read = await rs.db.command({ find: "acct", readConcern: { level: "snapshot", atClusterTime: at } });
    expect(read.cursor.firstBatch).to.have.length(2);
  });

  it("refuses snapshot read concern on commands that cannot read at a snapshot, as mongod does (72)", async () => {
    const session = rs.client.startSession({ snapshot: true });
    for (const run of [
      () => rs.db.collection("acct").insertOne({ _id: 9 } as Document, { session }),
      () => rs.db.collection("acct").updateOne({ _id: 1 } as Document, { $set: { x: 1 } }, { session }),
      () => rs.db.collection("acct").findOneAndDelete({ _id: 1 } as Document, { session }),
      () => rs.db.admin().listDatabases({ session }),
      () => rs.db.listCollections({}, { session }).toArray(),
      () => rs.db.collection("acct").listIndexes({ session }).toArray(),
      () => rs.db.command({ count: "acct" }, { session }),
    ]) {
      const err = await failure(run());
      expect(err.code, String(err.message)).to.equal(72);
      expect(err.message).to.match(/^Command \w+ does not support \{ readConcern: \{ level: "snapshot" \} \}$/);
    }
    await session.endSession();
    expect(await rs.db.collection("acct").countDocuments()).to.equal(2);
    const withoutSnapshot = await failure(
      rs.db.command({ find: "acct", readConcern: { level: "majority", atClusterTime: new Timestamp({ t: 1, i: 1 }) } }),
    );
    expect(withoutSnapshot.code).to.equal(72);
  });

  it("durable mode: a restart keeps no history, so a time from before it answers 239", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "snapshot-reads-"));
    try {
      let server = await startEmbeddedMongo({ replSet: "rs0", dbPath: dir });
      let c = new MongoClient(server.uri);
      await c
        .db("d")
        .collection("c")
        .insertOne({ _id: 1, v: 1 } as Document);
      const at = (await c.db("d").command({ find: "c", readConcern: { level: "snapshot" } })).cursor.atClusterTime as Timestamp;
      await c
        .db("d")
        .collection("c")
        .updateOne({ _id: 1 } as Document, { $set: { v: 2 } });
      await c.close();
      await server.stop();
      server = await startEmbeddedMongo({ replSet: "rs0", dbPath: dir });
      c = new MongoClient(server.uri);
      try {
        const err = await failure(c.db("d").command({ find: "c", readConcern: { level: "snapshot", atClusterTime: at } }));
        expect(err.code).to.equal(239);
        const now = (await c.db("d").command({ find: "c", readConcern: { level: "snapshot" } })).cursor;
        await c
          .db("d")
          .collection("c")
          .updateOne({ _id: 1 } as Document, { $set: { v: 3 } });
        const again = await c.db("d").command({ find: "c", readConcern: { level: "snapshot", atClusterTime: now.atClusterTime } });
        expect(again.cursor.firstBatch).to.deep.equal([{ _id: 1, v: 2 }]);
      } finally {
        await c.close();
        await server.stop();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
