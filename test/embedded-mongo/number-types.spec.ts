import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Double, Int32, Long, MongoClient, type Document } from "mongodb";
import { startEmbeddedMongo } from "../../src/embedded-mongo/index.ts";
import { failure, targetUri, usingRealMongo, useTestDatabase } from "./helpers.ts";

/** A stored document whose `_id` the test chooses (a number or a string). */
type Row = Document & { _id: number | string };

/** The BSON type names of a document's fields as stored, read without the driver's number promotion. */
async function storedTypes(client: MongoClient, db: string, coll: string, id: unknown): Promise<Document> {
  const raw = await client
    .db(db)
    .collection<Row>(coll)
    .findOne({ _id: id } as Document, { promoteValues: false, useBigInt64: false });
  return Object.fromEntries(Object.entries(raw ?? {}).map(([k, v]) => [k, (v as { _bsontype?: string })?._bsontype ?? typeof v]));
}

// mongod keeps each number with the BSON type it was sent as (int32, int64, double) and answers $type by it,
// while comparing numbers of different types by value.
describe("embedded-mongo: numbers keep their BSON type", () => {
  const t = useTestDatabase("em_number_types");

  it("stores a BigInt sent by a useBigInt64 client as an int64 and gives it back as a BigInt", async () => {
    const client = new MongoClient(await targetUri(), { useBigInt64: true });
    try {
      const c = client.db("em_number_types").collection<Row>("bigint");
      await c.insertOne({ _id: 1, n: 42n, big: 2n ** 60n });
      expect(await c.findOne({ n: { $type: "long" } })).to.deep.equal({ _id: 1, n: 42n, big: 2n ** 60n });
      expect(await c.findOne({ n: 42n })).to.deep.include({ n: 42n });
      expect(await storedTypes(client, "em_number_types", "bigint", 1)).to.deep.equal({ _id: "Int32", n: "Long", big: "Long" });
      // Updates keep it an int64: $set of a BigInt, $inc of an int32 on it, a filter by value of another type.
      await c.updateOne({ n: 42 }, { $set: { m: 7n }, $inc: { n: 1 } });
      expect(await c.findOne({ _id: 1 })).to.deep.include({ n: 43n, m: 7n });
      await c.updateOne({ _id: 1 }, [{ $set: { other: "x" } }]);
      expect(await storedTypes(client, "em_number_types", "bigint", 1)).to.deep.include({ n: "Long", m: "Long", big: "Long" });
    } finally {
      await client.close();
    }
  });

  it("stores an int32 and a double holding an integer each as sent, and answers $type by it", async () => {
    const c = t.db.collection<Row>("typed");
    await c.insertMany([
      { _id: "int", v: new Int32(5) },
      { _id: "intFromJs", v: 5 },
      { _id: "double", v: new Double(5) },
      { _id: "fraction", v: 5.5 },
      { _id: "long", v: Long.fromNumber(5) },
      { _id: "string", v: "5" },
    ]);
    expect(await storedTypes(t.client, "em_number_types", "typed", "int")).to.deep.include({ v: "Int32" });
    expect(await storedTypes(t.client, "em_number_types", "typed", "intFromJs")).to.deep.include({ v: "Int32" });
    expect(await storedTypes(t.client, "em_number_types", "typed", "double")).to.deep.include({ v: "Double" });
    expect(await storedTypes(t.client, "em_number_types", "typed", "long")).to.deep.include({ v: "Long" });
    const ids = async (type: unknown) => (await c.find({ v: { $type: type } } as Document).toArray()).map((d) => d._id).sort();
    expect(await ids("int")).to.deep.equal(["int", "intFromJs"]);
    expect(await ids(16)).to.deep.equal(["int", "intFromJs"]);
    expect(await ids("double")).to.deep.equal(["double", "fraction"]);
    expect(await ids(1)).to.deep.equal(["double", "fraction"]);
    expect(await ids("long")).to.deep.equal(["long"]);
    expect(await ids(18)).to.deep.equal(["long"]);
    expect(await ids("decimal")).to.deep.equal([]);
    expect(await ids(19)).to.deep.equal([]);
    expect(await ids("number")).to.deep.equal(["double", "fraction", "int", "intFromJs", "long"]);
    expect(await ids(["long", "string"])).to.deep.equal(["long", "string"]);
    expect(await ids("object")).to.deep.equal([]);
    expect(await c.countDocuments({ v: { $type: "double" } })).to.equal(2);
  });

  it("compares numbers of different types by value: equality, $in, ranges and sorts", async () => {
    const c = t.db.collection<Row>("compare");
    await c.insertMany([
      { _id: 1, v: 5 },
      { _id: 2, v: new Double(5) },
      { _id: 3, v: Long.fromNumber(5) },
      { _id: 4, v: Long.fromNumber(6) },
      { _id: 5, v: 4.5 },
    ]);
    const ids = async (filter: Document) => (await c.find(filter).toArray()).map((d) => d._id).sort();
    expect(await ids({ v: 5 })).to.deep.equal([1, 2, 3]);
    expect(await ids({ v: Long.fromNumber(5) })).to.deep.equal([1, 2, 3]);
    expect(await ids({ v: new Double(5) })).to.deep.equal([1, 2, 3]);
    expect(await ids({ v: { $in: [Long.fromNumber(6), 4.5] } })).to.deep.equal([4, 5]);
    expect(await ids({ v: { $ne: 5 } })).to.deep.equal([4, 5]);
    expect(await ids({ v: { $gt: Long.fromNumber(5) } })).to.deep.equal([4]);
    expect(await ids({ $expr: { $gt: ["$v", 5] } })).to.deep.equal([4]);
    expect(await ids({ v: { $elemMatch: { $eq: 5 } } })).to.deep.equal([]);
    const sorted = await c.find({}, { sort: { v: -1, _id: 1 } }).toArray();
    expect(sorted.map((d) => d._id)).to.deep.equal([4, 1, 2, 3, 5]);
    await c.createIndex({ v: 1 });
    expect(await ids({ v: 5 })).to.deep.equal([1, 2, 3]);
  });

  it("types the results of $inc and $mul as mongod does", async () => {
    const c = t.db.collection<Row>("arithmetic");
    await c.insertOne({ _id: 1, i: 1, max: 2147483647, l: Long.fromNumber(1), d: new Double(2), top: Long.MAX_VALUE });
    await c.updateOne({ _id: 1 }, { $inc: { i: 1, max: 1, l: 1, d: 1 }, $mul: { zeroLong: Long.fromNumber(3), zeroDouble: 2.5 } });
    expect(await storedTypes(t.client, "em_number_types", "arithmetic", 1)).to.deep.include({
      i: "Int32",
      max: "Long",
      l: "Long",
      d: "Double",
      zeroLong: "Long",
      zeroDouble: "Double",
    });
    expect(await c.findOne({ _id: 1 })).to.deep.include({ i: 2, max: 2147483648, l: 2, d: 3, zeroLong: 0, zeroDouble: 0 });
    await c.updateOne({ _id: 1 }, { $inc: { i: 0.5 } });
    expect(await storedTypes(t.client, "em_number_types", "arithmetic", 1)).to.deep.include({ i: "Double" });
    const overflow = await failure(c.updateOne({ _id: 1 }, { $inc: { top: 1 } }));
    expect(overflow.code).to.equal(2);
    expect(overflow.message).to.equal("Failed to apply $inc operations to current value ((NumberLong)9223372036854775807) for document {_id: 1}");
  });

  it("keeps the types of fields an update through mingo ($addToSet, positional $inc) leaves alone", async () => {
    const c = t.db.collection<Row>("mingo_path");
    await c.insertOne({ _id: 1, l: Long.fromNumber(7), d: new Double(1), tags: ["a"], arr: [{ n: 1 }] });
    await c.updateOne({ _id: 1 }, { $addToSet: { tags: "b" } });
    await c.updateOne({ "arr.n": 1 }, { $inc: { "arr.$.n": 1 } });
    expect(await storedTypes(t.client, "em_number_types", "mingo_path", 1)).to.deep.include({ l: "Long", d: "Double" });
    expect(await c.findOne({ _id: 1 })).to.deep.include({ tags: ["a", "b"], arr: [{ n: 2 }] });
  });

  it("gives stored types back from aggregate stages that pass documents through", async () => {
    const c = t.db.collection<Row>("aggregate");
    await c.insertMany([
      { _id: 1, l: Long.fromNumber(3) },
      { _id: 2, l: Long.fromNumber(4) },
    ]);
    const raw = await c.aggregate([{ $match: { l: { $type: "long" } } }, { $sort: { l: -1 } }], { promoteValues: false }).toArray();
    expect(raw.map((d) => (d.l as { _bsontype?: string })._bsontype)).to.deep.equal(["Long", "Long"]);
    expect(await c.aggregate([{ $group: { _id: null, total: { $sum: "$l" } } }]).toArray()).to.deep.equal([{ _id: null, total: 7 }]);
  });

  it("keeps the types across a restart of a durable server", async function () {
    if (usingRealMongo) this.skip();
    const dir = mkdtempSync(path.join(tmpdir(), "em-number-types-"));
    try {
      let mongo = await startEmbeddedMongo({ dbPath: dir });
      let client = new MongoClient(mongo.uri);
      await client
        .db("d")
        .collection<Row>("c")
        .insertOne({ _id: 1, l: Long.fromNumber(9), d: new Double(9), i: 9 });
      await client.close();
      await mongo.stop();
      mongo = await startEmbeddedMongo({ dbPath: dir });
      client = new MongoClient(mongo.uri);
      expect(await storedTypes(client, "d", "c", 1)).to.deep.equal({ _id: "Int32", l: "Long", d: "Double", i: "Int32" });
      await client.close();
      await mongo.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
