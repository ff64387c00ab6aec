import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { MongoClient, type Db, type Document } from "mongodb";
import { startEmbeddedMongo } from "../../src/embedded-mongo/index.ts";
import { cursorIdOf, failure, useReplicaSet } from "./helpers.ts";

async function infoOf(db: Db, name: string): Promise<Document> {
  return (await db.listCollections({ name }).toArray())[0] as Document;
}

const t = (ms: number) => new Date(1_700_000_000_000 + ms);

describe("embedded-mongo: clustered and time-series collections", function () {
  this.timeout(20000);
  const rs = useReplicaSet("special", { server: { ttlSweepIntervalMs: 100 } });

  it("clustered: listCollections and listIndexes show the clustered index; _id stays unique; the index cannot be dropped", async () => {
    await rs.db.createCollection("c", { clusteredIndex: { key: { _id: 1 }, unique: true, name: "by id" } });
    const info = await infoOf(rs.db, "c");
    expect(info.type).to.equal("collection");
    expect(info.options).to.deep.equal({ clusteredIndex: { v: 2, key: { _id: 1 }, name: "by id", unique: true } });
    expect(info).to.not.have.property("idIndex");
    expect(await rs.db.collection("c").listIndexes().toArray()).to.deep.equal([
      { v: 2, key: { _id: 1 }, name: "by id", unique: true, clustered: true },
    ]);
    await rs.db.collection("c").insertOne({ _id: 1 } as never);
    expect((await failure(rs.db.collection("c").insertOne({ _id: 1 } as never))).code).to.equal(11000);
    expect((await failure(rs.db.collection("c").dropIndex("by id"))).code).to.equal(72);
    await rs.db.createCollection("d", { clusteredIndex: { key: { _id: 1 }, unique: true } });
    expect((await infoOf(rs.db, "d")).options.clusteredIndex.name).to.equal("_id_");
  });

  it("clustered: refuses other keys, unique: false, and expireAfterSeconds (not implemented)", async () => {
    expect((await failure(rs.db.createCollection("x", { clusteredIndex: { key: { a: 1 }, unique: true } }))).code).to.equal(72);
    expect((await failure(rs.db.createCollection("x", { clusteredIndex: { key: { _id: 1 }, unique: false } }))).code).to.equal(72);
    expect((await failure(rs.db.createCollection("x", { clusteredIndex: { key: { _id: 1 }, unique: true }, expireAfterSeconds: 5 }))).code).to.equal(
      72,
    );
    expect((await failure(rs.db.createCollection("x", { expireAfterSeconds: 5 }))).code).to.equal(72);
    expect(await rs.db.listCollections().toArray()).to.deep.equal([]);
  });

  it("time-series: options normalized as mongod 7.0 lists them, type timeseries, no _id index", async () => {
    await rs.db.createCollection("m", { timeseries: { timeField: "time", metaField: "meta", granularity: "minutes" }, expireAfterSeconds: 604800 });
    await rs.db.createCollection("s", { timeseries: { timeField: "time" } });
    await rs.db.createCollection("b", { timeseries: { timeField: "time", bucketMaxSpanSeconds: 3600, bucketRoundingSeconds: 3600 } });
    const m = await infoOf(rs.db, "m");
    expect(m.type).to.equal("timeseries");
    expect(m.options).to.deep.equal({
      timeseries: { timeField: "time", metaField: "meta", granularity: "minutes", bucketMaxSpanSeconds: 86400 },
      expireAfterSeconds: 604800,
    });
    expect((await infoOf(rs.db, "s")).options.timeseries).to.deep.equal({ timeField: "time", granularity: "seconds", bucketMaxSpanSeconds: 3600 });
    expect((await infoOf(rs.db, "b")).options.timeseries).to.deep.equal({
      timeField: "time",
      bucketRoundingSeconds: 3600,
      bucketMaxSpanSeconds: 3600,
    });
    expect(await rs.db.collection("m").listIndexes().toArray()).to.deep.equal([]);
    await rs.db.collection("m").createIndex({ meta: 1, time: 1 });
    expect((await rs.db.collection("m").listIndexes().toArray()).map((i) => i.name)).to.deep.equal(["meta_1_time_1"]);
    expect((await failure(rs.db.collection("m").createIndex({ meta: 1 }, { unique: true }))).code).to.equal(72);
  });

  it("time-series: refuses invalid options", async () => {
    const bad: Document[] = [
      {},
      { timeField: 1 },
      { timeField: "t", metaField: "t" },
      { timeField: "t", metaField: "_id" },
      { timeField: "t", granularity: "days" },
      { timeField: "t", bucketMaxSpanSeconds: 10 },
      { timeField: "t", bucketMaxSpanSeconds: 10, bucketRoundingSeconds: 20 },
      { timeField: "t", granularity: "hours", bucketMaxSpanSeconds: 10 },
      { timeField: "t", other: 1 },
    ];
    for (const timeseries of bad) {
      const err = await failure(rs.db.createCollection("x", { timeseries } as never));
      expect(err.code, JSON.stringify(timeseries)).to.be.oneOf([2, 14, 72, 40414, 40415]);
    }
    expect(await rs.db.listCollections().toArray()).to.deep.equal([]);
  });

  it("time-series: duplicate _ids, documents come back as inserted; a missing time is refused; deletes work", async () => {
    await rs.db.createCollection("m", { timeseries: { timeField: "time", metaField: "meta" } });
    const coll = rs.db.collection("m");
    await coll.insertMany([
      { _id: 1, time: t(2), meta: { s: "a" }, v: 2 },
      { _id: 1, time: t(1), meta: { s: "b" }, v: 1 },
      { _id: 2, time: t(3), meta: { s: "a" }, v: 3 },
    ] as never[]);
    expect(await coll.find({}, { sort: { time: 1 } }).toArray()).to.deep.equal([
      { _id: 1, time: t(1), meta: { s: "b" }, v: 1 },
      { _id: 1, time: t(2), meta: { s: "a" }, v: 2 },
      { _id: 2, time: t(3), meta: { s: "a" }, v: 3 },
    ]);
    expect(await coll.countDocuments({ _id: 1 } as never)).to.equal(2);
    expect(await coll.aggregate([{ $group: { _id: "$meta.s", total: { $sum: "$v" } } }, { $sort: { _id: 1 } }]).toArray()).to.deep.equal([
      { _id: "a", total: 5 },
      { _id: "b", total: 1 },
    ]);
    const missing = await failure(coll.insertOne({ v: 9 }));
    expect(missing.code).to.equal(2);
    expect(missing.message).to.contain("'time' must be present and contain a valid BSON UTC datetime value");
    expect((await coll.deleteMany({ "meta.s": "a" })).deletedCount).to.equal(2);
    expect(await coll.find().toArray()).to.deep.equal([{ _id: 1, time: t(1), meta: { s: "b" }, v: 1 }]);
  });

  it("time-series: updates, findAndModify, $out into it and renames are refused, never approximated", async () => {
    await rs.db.createCollection("m", { timeseries: { timeField: "time" } });
    await rs.db.collection("m").insertOne({ _id: 1, time: t(0), v: 1 } as never);
    expect((await failure(rs.db.collection("m").updateOne({ _id: 1 } as never, { $set: { v: 2 } }))).code).to.equal(72);
    expect((await failure(rs.db.collection("m").findOneAndUpdate({ _id: 1 } as never, { $set: { v: 2 } }))).code).to.equal(72);
    expect((await failure(rs.db.collection("m").findOneAndDelete({ _id: 1 } as never))).code).to.equal(72);
    await rs.db.collection("src").insertOne({ time: t(0) });
    expect(
      (
        await failure(
          rs.db
            .collection("src")
            .aggregate([{ $out: "m" }])
            .toArray(),
        )
      ).code,
    ).to.equal(72);
    expect((await failure(rs.db.collection("m").rename("n"))).code).to.equal(166);
    expect(await rs.db.collection("m").find().toArray()).to.deep.equal([{ _id: 1, time: t(0), v: 1 }]);
  });

  it("time-series: expireAfterSeconds removes documents whose time is older", async () => {
    await rs.db.createCollection("m", { timeseries: { timeField: "time" }, expireAfterSeconds: 60 });
    const now = Date.now();
    await rs.db.collection("m").insertMany([
      { _id: "old", time: new Date(now - 3_600_000) },
      { _id: "new", time: new Date(now) },
    ] as never[]);
    const deadline = Date.now() + 5000;
    while ((await rs.db.collection("m").countDocuments()) > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await rs.db.collection("m").find().toArray()).to.deep.equal([{ _id: "new", time: new Date(now) }]);
  });

  it("time-series writes are not change events (mongod writes its buckets); a stream on one is refused", async () => {
    await rs.db.createCollection("m", { timeseries: { timeField: "time" } });
    const stream = await rs.db.command({ aggregate: 1, pipeline: [{ $changeStream: {} }], cursor: {} });
    await rs.db.collection("m").insertOne({ time: t(0) });
    await rs.db.collection("plain").insertOne({ _id: 1 } as never);
    const more = await rs.db.command({ getMore: cursorIdOf(stream), collection: "$cmd.aggregate", maxTimeMS: 300 });
    const events = [...stream.cursor.firstBatch, ...more.cursor.nextBatch];
    expect(events.map((e) => `${e.operationType} ${e.ns.coll}`)).to.deep.equal(["insert plain"]);
    expect((await failure(rs.db.command({ aggregate: "m", pipeline: [{ $changeStream: {} }], cursor: {} }))).code).to.equal(166);
  });
});

describe("embedded-mongo: clustered and time-series collections in durable mode", function () {
  this.timeout(30000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), "embedded-mongo-ts-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  for (const snapshotAfterJournalBytes of [64 * 1024 * 1024, 2_000]) {
    it(`restart keeps their options and documents, duplicate time-series _ids included (snapshot after ${snapshotAfterJournalBytes} bytes)`, async () => {
      let mongo = await startEmbeddedMongo({ dbPath: dir, snapshotAfterJournalBytes });
      let client = new MongoClient(mongo.uri);
      let db = client.db("d");
      await db.createCollection("c", { clusteredIndex: { key: { _id: 1 }, unique: true, name: "cl" } });
      await db.collection("c").insertOne({ _id: 1, pad: "x".repeat(400) } as never);
      await db.createCollection("m", { timeseries: { timeField: "time" } });
      for (let i = 0; i < 12; i++) await db.collection("m").insertOne({ _id: i % 3, time: t(i), pad: "x".repeat(300) } as never);
      await db.collection("m").deleteOne({ time: t(4) });
      await client.close();
      await mongo.stop();

      mongo = await startEmbeddedMongo({ dbPath: dir });
      client = new MongoClient(mongo.uri);
      db = client.db("d");
      try {
        expect((await db.collection("c").listIndexes().toArray())[0]).to.include({ name: "cl", clustered: true });
        expect((await failure(db.collection("c").insertOne({ _id: 1 } as never))).code).to.equal(11000);
        expect((await infoOf(db, "m")).type).to.equal("timeseries");
        const times = (
          await db
            .collection("m")
            .find({}, { sort: { time: 1 } })
            .toArray()
        ).map((d) => d.time.getTime() - t(0).getTime());
        expect(times).to.deep.equal([0, 1, 2, 3, 5, 6, 7, 8, 9, 10, 11]);
        expect(await db.collection("m").countDocuments({ _id: 1 } as never)).to.equal(3);
      } finally {
        await client.close();
        await mongo.stop();
      }
    });
  }
});
