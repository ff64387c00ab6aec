import { expect } from "chai";
import { ObjectId, type Document } from "mongodb";
import { failure, useTestDatabase } from "./helpers.ts";

/** A stored document whose `_id` the test chooses (a number or a string). */
type Row = Document & { _id: number | string };

// Answers mongoose's own test suite found different from mongod 7: $all counts, an aggregate's hint, positional
// and $elemMatch projections. Each case states mongod's answer.
describe("embedded-mongo: $all, aggregate hints and positional projections as mongod answers them", () => {
  const t = useTestDatabase("em_query_answers");

  describe("$all", () => {
    before(async () => {
      await t.db.collection<Row>("all").insertMany([
        {
          _id: 1,
          tags: ["abc", "bcd"],
          items: [
            { k: 1, v: 2 },
            { k: 2, v: 5 },
          ],
        },
        { _id: 2, tags: ["bcd"], items: [{ k: 1, v: 9 }] },
        { _id: 3, tags: "cab" },
        { _id: 4, tags: [["abc", "bcd"]] },
      ]);
    });
    const count = (filter: Document) => t.db.collection<Row>("all").countDocuments(filter);
    const countCommand = async (query: Document) => (await t.db.command({ count: "all", query })).n as number;

    it("counts regular expressions as matches of some element, each list apart", async () => {
      expect(await count({ tags: { $all: [/^a/] } })).to.equal(1);
      expect(await count({ tags: { $all: [/^b/] } })).to.equal(2);
      expect(await count({ tags: { $all: [/^c/] } })).to.equal(1);
      expect(await count({ tags: { $all: [/^b/, "abc"] } })).to.equal(1);
      expect(await countCommand({ tags: { $all: [/^b/] } })).to.equal(2);
      // Never inside an array nested in the field's array (document 4), with $all or without.
      expect(await count({ tags: /^a/ })).to.equal(1);
      expect(await count({ tags: { $regex: "^A", $options: "i" } })).to.equal(1);
      expect(await count({ tags: { $not: /^a/ } })).to.equal(3);
      const found = await t.db
        .collection<Row>("all")
        .find({ tags: { $all: [/d$/] } })
        .toArray();
      expect(found.map((d) => d._id)).to.deep.equal([1, 2]);
    });

    it("counts values, a scalar field equal to the value, a nested array and an empty list", async () => {
      expect(await count({ tags: { $all: ["bcd"] } })).to.equal(2);
      expect(await count({ tags: { $all: ["cab"] } })).to.equal(1);
      expect(await count({ tags: { $all: [["abc", "bcd"]] } })).to.equal(2);
      expect(await count({ tags: { $all: [] } })).to.equal(0);
      expect(await countCommand({ tags: { $all: [] } })).to.equal(0);
    });

    it("counts $elemMatch clauses, each matched by some element", async () => {
      const clauses = [{ $elemMatch: { k: 1 } }, { $elemMatch: { v: { $gt: 4 } } }];
      expect(await count({ items: { $all: clauses } })).to.equal(2);
      expect(await countCommand({ items: { $all: clauses } })).to.equal(2);
      expect(await count({ items: { $all: [{ $elemMatch: { k: 1, v: { $gt: 4 } } }] } })).to.equal(1);
    });

    it("tells an ObjectId from its hex string", async () => {
      const c = t.db.collection<Row>("all_ids");
      const id = new ObjectId();
      await c.insertMany([
        { _id: 1, r: [id] },
        { _id: 2, r: [id.toHexString()] },
        { _id: 3, r: [id, id.toHexString()] },
      ]);
      const ids = async (filter: Document) => (await c.find(filter).toArray()).map((d) => d._id);
      expect(await ids({ r: { $all: [id.toHexString()] } })).to.deep.equal([2, 3]);
      expect(await ids({ r: { $all: [id] } })).to.deep.equal([1, 3]);
      expect(await c.countDocuments({ r: { $all: [id, id.toHexString()] } })).to.equal(1);
    });
  });

  describe("aggregate hint", () => {
    before(async () => {
      const c = t.db.collection<Row>("hint");
      await c.insertMany([
        { _id: 1, a: 3 },
        { _id: 2, a: 1 },
        { _id: 3, a: 2 },
      ]);
      await c.createIndex({ a: -1 }, { name: "a_desc" });
    });

    it("scans the hinted index: unsorted results come in its order", async () => {
      const c = t.db.collection<Row>("hint");
      const byName = await c.aggregate([{ $match: {} }], { hint: "a_desc" }).toArray();
      expect(byName.map((d) => d.a)).to.deep.equal([3, 2, 1]);
      const byKey = await c.aggregate([{ $project: { _id: 0, a: 1 } }], { hint: { a: -1 } }).toArray();
      expect(byKey).to.deep.equal([{ a: 3 }, { a: 2 }, { a: 1 }]);
      expect(await c.countDocuments({ a: { $gte: 2 } }, { hint: "a_desc" })).to.equal(2);
    });

    it("answers 2 BadValue for a hint naming no index", async () => {
      const c = t.db.collection<Row>("hint");
      for (const hint of ["nope", { b: 1 }] as const) {
        const err = await failure(c.aggregate([{ $match: {} }], { hint }).toArray());
        expect(err.code).to.equal(2);
        expect(err.codeName).to.equal("BadValue");
        expect(err.message).to.include("hint provided does not correspond to an existing index");
      }
      const counted = await failure(c.countDocuments({}, { hint: "nope" }));
      expect(counted.code).to.equal(2);
      expect(await c.aggregate([{ $match: {} }], { hint: { $natural: 1 } }).toArray()).to.have.length(3);
    });
  });

  describe("positional and $elemMatch projections", () => {
    before(async () => {
      await t.db.collection<Row>("projection").insertMany([
        {
          _id: 1,
          arr: [
            { x: 1, y: 2 },
            { x: 2, y: 3 },
            { x: 2, y: 4 },
          ],
          nums: [5, 6, 7],
          sub: { list: [1, 2, 3] },
        },
        { _id: 2, arr: [{ x: 5 }], nums: [8] },
      ]);
    });
    const find = (filter: Document, projection: Document) => t.db.collection<Row>("projection").find(filter, { projection }).toArray();

    it("projects the first element the query matched, _id first", async () => {
      const [doc] = await find({ "arr.x": 2 }, { "arr.$": 1 });
      expect(doc).to.deep.equal({ _id: 1, arr: [{ x: 2, y: 3 }] });
      expect(Object.keys(doc!)).to.deep.equal(["_id", "arr"]);
      expect(await find({ nums: { $gt: 5 } }, { "nums.$": 1, _id: 0 })).to.deep.equal([{ nums: [6] }, { nums: [8] }]);
      expect(await find({ arr: { $elemMatch: { x: 2, y: 4 } } }, { "arr.$": 1 })).to.deep.equal([{ _id: 1, arr: [{ x: 2, y: 4 }] }]);
      expect(await find({ "sub.list": 2 }, { "sub.list.$": 1 })).to.deep.equal([{ _id: 1, sub: { list: [2] } }]);
      expect(await find({ _id: 1, "arr.y": { $gte: 3 } }, { "arr.$": 1, nums: 1 })).to.deep.equal([
        { _id: 1, arr: [{ x: 2, y: 3 }], nums: [5, 6, 7] },
      ]);
      expect(await t.db.collection<Row>("projection").findOne({ nums: 7 }, { projection: { "nums.$": 1 } })).to.deep.equal({ _id: 1, nums: [7] });
    });

    it("projects $elemMatch beside other fields, and answers mongod's errors for mixing it with $", async () => {
      expect(await find({ _id: 1 }, { arr: { $elemMatch: { x: 2 } }, nums: 1 })).to.deep.equal([{ _id: 1, nums: [5, 6, 7], arr: [{ x: 2, y: 3 }] }]);
      const cases: [Document, Document, number, string][] = [
        [{ "arr.x": 2 }, { "arr.$": 1, nums: { $elemMatch: { $gt: 5 } } }, 31255, "Cannot specify positional operator and $elemMatch."],
        [{ "arr.x": 2 }, { nums: { $elemMatch: { $gt: 5 } }, "arr.$": 1 }, 31256, "Cannot specify positional operator and $elemMatch."],
        [{ "arr.x": 2 }, { "arr.$": 1, arr: 1 }, 31250, "Path collision at arr"],
        [{ "arr.x": 2 }, { "arr.$": 1, "nums.$": 1 }, 31276, "Cannot specify more than one positional projection per query."],
        [{ "arr.x": 2 }, { "arr.$.x": 1 }, 31394, "As of 4.4, it's illegal to specify positional operator in the middle of a path"],
        [{ "arr.x": 2 }, { "arr.$": 0 }, 31395, "positional projection cannot be used with exclusion"],
        [{ "arr.x": 2 }, { "arr.$": { $slice: 1 } }, 31271, "positional projection cannot be used with an expression or sub object"],
        [{}, { "sub.list": { $elemMatch: { $gt: 1 } } }, 31275, "Cannot use $elemMatch projection on a nested field."],
        [{}, { nums: { $elemMatch: 5 } }, 31274, "elemMatch: Invalid argument, object required"],
        [{ _id: 1 }, { "arr.$": 1 }, 51246, "positional operator '.$' couldn't find a matching element in the array"],
      ];
      for (const [filter, projection, code, message] of cases) {
        const err = await failure(find(filter, projection));
        expect([err.code, projection]).to.deep.equal([code, projection]);
        expect(err.message).to.include(message);
      }
    });
  });
});

// Aggregation expressions compare any two values in BSON order, without the type brackets of query operators, and a
// missing field is below null (so it equals none).
describe("embedded-mongo: comparison expressions as mongod answers them", () => {
  const t = useTestDatabase("em_expression_comparisons");
  const due = new Date("2026-01-01T00:00:00Z");

  before(async () => {
    await t.db
      .collection<Row>("cmp")
      .insertMany([{ _id: 0, a: null }, { _id: 1 }, { _id: 2, a: 1 }, { _id: 3, a: 5 }, { _id: 4, a: "x" }, { _id: 5, a: due }]);
  });
  const ids = async (expr: Document) => (await t.db.collection<Row>("cmp").find({ $expr: expr }).sort({ _id: 1 }).toArray()).map((d) => d._id);

  it("$lt, $lte, $gt and $gte order values of different types, a missing field and null lowest", async () => {
    // mongod: {$expr: {$lt: ["$a", 5]}} matches {a: null} and {} too, where {a: {$lt: 5}} matches only numbers.
    expect(await ids({ $lt: ["$a", 5] })).to.deep.equal([0, 1, 2]);
    expect(await ids({ $lte: ["$a", due] })).to.deep.equal([0, 1, 2, 3, 4, 5]);
    expect(await ids({ $gt: ["$a", 1] })).to.deep.equal([3, 4, 5]);
    expect(await ids({ $gte: ["$a", null] })).to.deep.equal([0, 2, 3, 4, 5]);
  });

  it("$eq and $ne tell a missing field from null", async () => {
    expect(await ids({ $eq: ["$a", null] })).to.deep.equal([0]);
    expect(await ids({ $ne: ["$a", null] })).to.deep.equal([1, 2, 3, 4, 5]);
    expect(await ids({ $eq: ["$a", "$missing"] })).to.deep.equal([1]);
  });

  it("$cmp answers -1, 0 or 1 across types", async () => {
    const rows = await t.db
      .collection<Row>("cmp")
      .aggregate([{ $sort: { _id: 1 } }, { $project: { c: { $cmp: ["$a", 1] } } }])
      .toArray();
    expect(rows.map((r) => r.c)).to.deep.equal([-1, -1, 0, 1, 1, 1]);
  });
});
