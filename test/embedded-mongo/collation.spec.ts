// Collations: string comparisons under ICU rules in queries, sorts, distinct, $group, writes, collection defaults
// and index selection, plus mongod's answers to invalid collation documents.
import { expect } from "chai";
import type { CollationOptions, Document } from "mongodb";
import { expectLength, failure, useTestDatabase, usingRealMongo } from "./helpers.ts";

/** Documents of these tests: numbered ids (and a few string ones), fields of every type. */
type NumberedDocument = { _id: number | string; [field: string]: any };

const CI: CollationOptions = { locale: "en_US", strength: 2 };

describe("embedded-mongo: collations", () => {
  const t = useTestDatabase("em_collation");

  before(async () => {
    await t.db.collection<NumberedDocument>("names").insertMany([
      { _id: 1, name: "apple", v: "item10" },
      { _id: 2, name: "Apple", v: "item9" },
      { _id: 3, name: "APPLE", v: "item1" },
      { _id: 4, name: "banana", v: "Item2" },
      { _id: 5, name: "äpple", v: "item20" },
    ] as NumberedDocument[]);
  });

  it("matches case-insensitively at strength 2 (accents still count) and binary without a collation", async () => {
    const c = t.db.collection<NumberedDocument>("names");
    const ids = async (filter: Document, collation?: CollationOptions) =>
      (await c.find(filter, collation ? { collation, sort: { _id: 1 } } : { sort: { _id: 1 } }).toArray()).map((d) => d._id);
    expect(await ids({ name: "APPLE" }, CI)).to.deep.equal([1, 2, 3]);
    expect(await ids({ name: "APPLE" })).to.deep.equal([3]);
    expect(await ids({ name: "apple" }, { locale: "en", strength: 1 })).to.deep.equal([1, 2, 3, 5]);
    expect(await ids({ name: { $in: ["BANANA", "x"] } }, CI)).to.deep.equal([4]);
    expect(await ids({ name: { $ne: "apple" } }, CI)).to.deep.equal([4, 5]);
    expect(await ids({ name: { $gt: "APPLE", $lt: "B" } }, CI)).to.deep.equal([5]);
    expect(await ids({ $expr: { $eq: ["$name", "APPLE"] } }, CI)).to.deep.equal([1, 2, 3]);
    expect(await c.countDocuments({ name: "Apple" }, { collation: CI })).to.equal(3);
  });

  it("sorts with numericOrdering and by locale rules", async () => {
    const c = t.db.collection<NumberedDocument>("names");
    const numeric = await c.find({}, { sort: { v: 1 }, collation: { locale: "en", numericOrdering: true, strength: 2 } }).toArray();
    expect(numeric.map((d) => d.v)).to.deep.equal(["item1", "Item2", "item9", "item10", "item20"]);
    const binary = await c.find({}, { sort: { v: 1 } }).toArray();
    expect(binary.map((d) => d.v)).to.deep.equal(["Item2", "item1", "item10", "item20", "item9"]);
    const agg = await c.aggregate([{ $sort: { v: -1 } }, { $limit: 2 }], { collation: { locale: "en", numericOrdering: true } }).toArray();
    expect(agg.map((d) => d.v)).to.deep.equal(["item20", "item10"]);
  });

  it("returns one value per collation-equal group from distinct and $group", async () => {
    const c = t.db.collection<NumberedDocument>("names");
    expect(await c.distinct("name", {}, { collation: CI })).to.deep.equal(["apple", "äpple", "banana"]);
    expect((await c.distinct("name")).length).to.equal(5);
    const groups = await c.aggregate([{ $group: { _id: "$name", n: { $sum: 1 } } }, { $sort: { n: -1 } }], { collation: CI }).toArray();
    expect(groups).to.deep.equal([
      { _id: "apple", n: 3 },
      { _id: "banana", n: 1 },
      { _id: "äpple", n: 1 },
    ]);
  });

  it("applies collations to updates, deletes and findAndModify", async () => {
    const c = t.db.collection<NumberedDocument>("writes");
    await c.insertMany([
      { _id: 1, k: "a", tags: ["X", "y"] },
      { _id: 2, k: "A", tags: ["x"] },
      { _id: 3, k: "b", tags: [] },
    ] as NumberedDocument[]);
    expect((await c.updateMany({ k: "A" }, { $set: { hit: true } }, { collation: CI })).modifiedCount).to.equal(2);
    await c.updateOne({ _id: 1 }, { $pull: { tags: "x" } as Document }, { collation: CI });
    expect((await c.findOne({ _id: 1 }))?.tags).to.deep.equal(["y"]);
    const found = await c.findOneAndUpdate({ k: "B" }, { $set: { seen: 1 } }, { collation: CI, returnDocument: "after" });
    expect(found?._id).to.equal(3);
    expect((await c.deleteMany({ k: "a" }, { collation: CI })).deletedCount).to.equal(2);
  });

  it("uses the collection's default collation when a command gives none, and reports it whole", async () => {
    await t.db.createCollection("ci", { collation: CI });
    const c = t.db.collection<NumberedDocument>("ci");
    await c.insertMany([
      { _id: 1, s: "Hello" },
      { _id: 2, s: "world" },
    ] as NumberedDocument[]);
    expect((await c.find({ s: "HELLO" }).toArray()).map((d) => d._id)).to.deep.equal([1]);
    expect(await c.find({ s: "HELLO" }, { collation: { locale: "simple" } }).toArray()).to.deep.equal([]);
    const listed = (await t.db.listCollections({ name: "ci" }).toArray()) as Document[];
    expectLength(listed, 1);
    const [info] = listed;
    expect(info.options.collation).to.deep.include({
      locale: "en_US",
      caseLevel: false,
      caseFirst: "off",
      strength: 2,
      numericOrdering: false,
      alternate: "non-ignorable",
      maxVariable: "punct",
      normalization: false,
      backwards: false,
    });
    expect(info.options.collation.version).to.be.a("string");
    // The _id index and new indexes inherit it; `{locale: "simple"}` opts out.
    await c.createIndex({ s: 1 });
    await c.createIndex({ s: -1 }, { collation: { locale: "simple" } });
    const indexes = await c.listIndexes().toArray();
    expect(indexes.find((i) => i.name === "_id_")?.collation?.strength).to.equal(2);
    expect(indexes.find((i) => i.name === "s_1")?.collation?.locale).to.equal("en_US");
    expect(indexes.find((i) => i.name === "s_-1")?.collation).to.equal(undefined);
    // Under a case-insensitive _id index, "hello" and "HELLO" are the same key.
    await c.insertOne({ _id: "key" });
    expect((await failure(c.insertOne({ _id: "KEY" }))).code).to.equal(11000);
  });

  it("does not use an index whose collation differs from the query's (the answer stays right)", async () => {
    const c = t.db.collection<NumberedDocument>("indexed");
    await c.insertMany([
      { _id: 1, s: "abc" },
      { _id: 2, s: "ABC" },
      { _id: 3, s: "abd" },
      { _id: 4, n: 5 },
    ] as NumberedDocument[]);
    await c.createIndex({ s: 1 });
    await c.createIndex({ s: 1 }, { name: "s_ci", collation: CI });
    const plain = await c.find({ s: "ABC" }).toArray();
    expect(plain.map((d) => d._id)).to.deep.equal([2]);
    const ci = await c.find({ s: "ABC" }, { collation: CI }).sort({ _id: 1 }).toArray();
    expect(ci.map((d) => d._id)).to.deep.equal([1, 2]);
    const sorted = await c
      .find({ s: { $exists: true } }, { collation: { locale: "en" } })
      .sort({ s: 1 })
      .toArray();
    expect(sorted.map((d) => d.s)).to.deep.equal(["abc", "ABC", "abd"]);
    // Even a hint of the binary index gives the collated answer.
    const hinted = await c.find({ s: "abc" }, { collation: CI, hint: "s_1" }).sort({ _id: 1 }).toArray();
    expect(hinted.map((d) => d._id)).to.deep.equal([1, 2]);
    if (!usingRealMongo) {
      const plan = (await c.find({ s: "ABC" }, { collation: CI }).explain("executionStats")) as Document;
      expect(JSON.stringify(plan.queryPlanner.winningPlan)).to.include("s_ci");
      const binaryPlan = (await c.find({ s: "ABC" }).explain("executionStats")) as Document;
      expect(JSON.stringify(binaryPlan.queryPlanner.winningPlan)).to.include('"s_1"');
    }
  });

  it("answers mongod's errors for invalid collation documents", async () => {
    const c = t.db.collection<NumberedDocument>("names");
    const code = async (collation: unknown) => (await failure(c.find({}, { collation: collation as CollationOptions }).toArray())).code;
    expect(await code({ locale: "en", foo: 1 })).to.equal(9); // FailedToParse: unknown field
    expect(await code({ locale: "xx_NOPE" })).to.equal(2); // BadValue: Field 'locale' is invalid
    expect(await code({ locale: "" })).to.equal(2);
    expect(await code({ strength: 2 })).to.equal(4); // NoSuchKey: Missing expected field "locale"
    expect(await code({ locale: 5 })).to.equal(14); // TypeMismatch
    expect(await code({ locale: "en", caseLevel: "yes" })).to.equal(14);
    expect(await code({ locale: "en", strength: "2" })).to.equal(14);
    expect(await code({ locale: "en", strength: 6 })).to.equal(9);
    expect(await code({ locale: "en", caseFirst: "sideways" })).to.equal(9);
    expect(await code({ locale: "simple", strength: 1 })).to.equal(9);
    expect(await code({ locale: "en", strength: 1, backwards: true })).to.equal(2);
    expect(await code({ locale: "en", strength: 1, caseFirst: "upper" })).to.equal(2);
    const invalid = await failure(c.find({}, { collation: { locale: "xx_NOPE" } }).toArray());
    expect(invalid.message).to.match(/^Field 'locale' is invalid in: \{ locale: "xx_NOPE" \}/);
    expect((await failure(t.db.createCollection("bad", { collation: { locale: "en", bogus: true } as CollationOptions }))).code).to.equal(9);
    expect((await failure(c.createIndex({ name: 1 }, { collation: { locale: "nope_NOPE" } }))).code).to.equal(2);
  });

  it("refuses what it cannot compare like mongod rather than answering differently", async function () {
    if (usingRealMongo) this.skip();
    const c = t.db.collection<NumberedDocument>("names");
    const code = async (collation: CollationOptions) => (await failure(c.find({}, { collation }).toArray())).code;
    expect(await code({ locale: "en", strength: 3, caseLevel: true })).to.equal(2);
    expect(await code({ locale: "en", strength: 4, alternate: "shifted" })).to.equal(2);
    const err = await failure(c.aggregate([{ $lookup: { from: "x", localField: "a", foreignField: "b", as: "j" } }], { collation: CI }).toArray());
    expect(err.code).to.equal(2);
    expect((await failure(c.updateOne({ _id: 1 }, { $addToSet: { tags: "A" } }, { collation: CI }))).code).to.equal(2);
  });
});
