import { expect } from "chai";
import { Decimal128, Double, Int32, Long, MongoClient, type Collection, type Document } from "mongodb";
import { failure, targetUri, usingRealMongo } from "./helpers.ts";

/** A stored document whose `_id` the test chooses. */
type Row = Document & { _id: number };

/** A value as `Type(value)` (a document's or an array's members each so), read without number promotion. */
function typed(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(typed);
  if (v === null || typeof v !== "object") return v;
  if (v instanceof Date) return v.toISOString();
  const type = (v as { _bsontype?: string })._bsontype;
  if (type) return `${type}(${String(v)})`;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typed(x)]));
}

// mongod types what it computes: int32 with int32 stays int32 until it overflows into an int64, an int64 overflows
// into a double, anything with a double is a double; $divide, $avg and the logarithms answer doubles.
describe("embedded-mongo: computed numbers keep mongod's types and field order", () => {
  let client: MongoClient;
  let c: Collection<Row>;

  before(async () => {
    client = new MongoClient(await targetUri(), { promoteValues: false });
    const db = client.db("em_computed_numbers");
    await db.dropDatabase();
    c = db.collection<Row>("c");
    await c.insertOne({
      _id: 1,
      i: new Int32(2147483647),
      two: new Int32(2),
      d: new Double(1.5),
      dd: new Double(2),
      l: Long.fromNumber(5),
      arr: [new Int32(1), new Double(2.5), Long.fromNumber(3)],
    });
  });

  after(async () => {
    await client.db("em_computed_numbers").dropDatabase();
    await client.close();
  });

  /** The value `expr` computes over the test document. */
  async function computed(expr: unknown): Promise<unknown> {
    const [doc] = await c.aggregate([{ $project: { _id: 0, r: expr } }]).toArray();
    return typed(doc!.r);
  }

  it("answers the lead's probe as mongod: $divide a double, _id first, $sum of doubles a double, $avg a double", async () => {
    const [projected] = await c
      .aggregate([
        { $project: { a: { $add: ["$d", 1.5] }, b: { $multiply: [new Int32(3), new Int32(4)] }, c: { $divide: [new Int32(6), new Int32(3)] } } },
      ])
      .toArray();
    expect(Object.keys(projected!)).to.deep.equal(["_id", "a", "b", "c"]);
    expect(typed(projected)).to.deep.equal({ _id: "Int32(1)", a: "Double(3)", b: "Int32(12)", c: "Double(2)" });
    const [grouped] = await c.aggregate([{ $group: { _id: null, s: { $sum: "$d" }, avg: { $avg: new Int32(2) } } }]).toArray();
    expect(typed(grouped)).to.deep.equal({ _id: null, s: "Double(1.5)", avg: "Double(2)" });
  });

  it("types $add, $subtract and $multiply by the widest operand, int32 overflowing into int64 and int64 into double", async () => {
    expect(await computed({ $add: ["$i", new Int32(1)] })).to.equal("Long(2147483648)");
    expect(await computed({ $add: ["$i", new Int32(1), new Int32(-1)] })).to.equal("Int32(2147483647)");
    expect(await computed({ $add: ["$l", new Int32(1)] })).to.equal("Long(6)");
    expect(await computed({ $add: ["$dd", new Int32(1)] })).to.equal("Double(3)");
    expect(await computed({ $add: [Long.MAX_VALUE, new Int32(1)] })).to.equal("Double(9223372036854776000)");
    expect(await computed({ $subtract: ["$l", new Int32(1)] })).to.equal("Long(4)");
    expect(await computed({ $subtract: [new Int32(-2147483648), new Int32(1)] })).to.equal("Long(-2147483649)");
    expect(await computed({ $subtract: [new Date(10), new Date(4)] })).to.equal("Long(6)");
    expect(await computed({ $multiply: ["$i", new Int32(2)] })).to.equal("Long(4294967294)");
    expect(await computed({ $multiply: ["$l", new Double(2)] })).to.equal("Double(10)");
    expect(await computed({ $multiply: [Long.MAX_VALUE, new Int32(2)] })).to.equal("Double(18446744073709552000)");
    expect(await computed({ $add: [new Date(1000), new Int32(5), new Double(1.5)] })).to.equal(new Date(1007).toISOString());
  });

  it("types the other arithmetic operators as mongod: doubles for $divide, roots and logarithms", async () => {
    expect(await computed({ $divide: ["$l", new Int32(5)] })).to.equal("Double(1)");
    expect(await computed({ $mod: ["$l", new Int32(3)] })).to.equal("Long(2)");
    expect(await computed({ $mod: [new Int32(7), new Int32(-3)] })).to.equal("Int32(1)");
    expect(await computed({ $mod: ["$dd", new Int32(3)] })).to.equal("Double(2)");
    expect(await computed({ $abs: "$l" })).to.equal("Long(5)");
    expect(await computed({ $abs: new Int32(-2147483648) })).to.equal("Long(2147483648)");
    expect(await computed({ $ceil: "$dd" })).to.equal("Double(2)");
    expect(await computed({ $floor: "$two" })).to.equal("Int32(2)");
    expect(await computed({ $round: ["$l", 0] })).to.equal("Long(5)");
    expect(await computed({ $trunc: "$d" })).to.equal("Double(1)");
    expect(await computed({ $pow: ["$two", new Int32(3)] })).to.equal("Int32(8)");
    expect(await computed({ $pow: ["$two", new Int32(31)] })).to.equal("Long(2147483648)");
    expect(await computed({ $pow: ["$two", new Int32(64)] })).to.equal("Double(18446744073709552000)");
    expect(await computed({ $pow: ["$two", new Int32(-1)] })).to.equal("Double(0.5)");
    expect(await computed({ $pow: [new Int32(-1), new Int32(-3)] })).to.equal("Int32(-1)");
    expect(await computed({ $pow: ["$l", new Int32(2)] })).to.equal("Long(25)");
    expect(await computed({ $sqrt: new Int32(4) })).to.equal("Double(2)");
    expect(await computed({ $exp: new Int32(0) })).to.equal("Double(1)");
    expect(await computed({ $ln: new Int32(1) })).to.equal("Double(0)");
    expect(await computed({ $log: [new Int32(8), new Int32(2)] })).to.equal("Double(3)");
    expect(await computed({ $log10: new Int32(100) })).to.equal("Double(2)");
    expect(await computed({ $toLong: "$two" })).to.equal("Long(2)");
    expect(await computed({ $toDouble: "$two" })).to.equal("Double(2)");
    expect(await computed({ $sum: "$arr" })).to.equal("Double(6.5)");
    expect(await computed({ $sum: [new Int32(1), "$l"] })).to.equal("Long(6)");
    expect(await computed({ $avg: [new Int32(2), new Int32(4)] })).to.equal("Double(3)");
    expect(await computed({ $max: "$arr" })).to.equal("Long(3)");
    expect(await computed({ $min: ["$dd", "$l"] })).to.equal("Double(2)");
  });

  it("keeps a value a stage only passes along typed: field paths, $cond, $ifNull, literals", async () => {
    expect(await computed("$l")).to.equal("Long(5)");
    expect(await computed("$dd")).to.equal("Double(2)");
    expect(await computed({ $cond: [{ $gt: ["$l", 1] }, "$l", 0] })).to.equal("Long(5)");
    expect(await computed({ $ifNull: ["$missing", "$dd"] })).to.equal("Double(2)");
    expect(await computed({ $literal: Long.fromNumber(1) })).to.equal("Long(1)");
    expect(await computed({ $toString: { $add: ["$l", new Int32(1)] } })).to.equal("6");
    const [added] = await c
      .aggregate([{ $addFields: { n: Long.fromNumber(1), x: { $add: ["$l", new Int32(1)] } } }, { $project: { l: 1, n: 1, x: 1 } }])
      .toArray();
    expect(typed(added)).to.deep.equal({ _id: "Int32(1)", l: "Long(5)", n: "Long(1)", x: "Long(6)" });
    // A value computed where an equal one of another type was: the computed type.
    const [sized] = await c.aggregate([{ $set: { l: { $strLenCP: "abcde" }, dd: new Int32(2) } }, { $project: { l: 1, dd: 1 } }]).toArray();
    expect(typed(sized)).to.deep.equal({ _id: "Int32(1)", dd: "Int32(2)", l: "Int32(5)" });
  });

  it("keeps the types through $let, $map, $filter, $reduce, $arrayElemAt, object literals and `let` variables", async () => {
    expect(await computed({ $map: { input: "$arr", in: { $multiply: ["$$this", new Int32(2)] } } })).to.deep.equal([
      "Int32(2)",
      "Double(5)",
      "Long(6)",
    ]);
    expect(await computed({ $map: { input: "$arr", as: "x", in: { $toString: "$$x" } } })).to.deep.equal(["1", "2.5", "3"]);
    expect(await computed({ $filter: { input: "$arr", cond: { $gt: ["$$this", new Int32(2)] } } })).to.deep.equal(["Double(2.5)", "Long(3)"]);
    expect(
      await computed({ $reduce: { input: [new Int32(1), Long.fromNumber(2)], initialValue: new Int32(0), in: { $add: ["$$value", "$$this"] } } }),
    ).to.equal("Long(3)");
    expect(await computed({ $let: { vars: { x: "$dd" }, in: "$$x" } })).to.equal("Double(2)");
    expect(await computed({ $arrayElemAt: ["$arr", new Int32(-1)] })).to.equal("Long(3)");
    expect(await computed({ $ifNull: ["$missing", { a: "$l", b: "$missing" }] })).to.deep.equal({ a: "Long(5)" });
    const [withLet] = await c
      .aggregate([{ $project: { _id: 0, v: "$$v", next: { $add: ["$$v", new Int32(1)] } } }], { let: { v: Long.fromNumber(9) } })
      .toArray();
    expect(typed(withLet)).to.deep.equal({ v: "Long(9)", next: "Long(10)" });
    expect(Number(await c.countDocuments({ $expr: { $eq: [{ $toString: "$$v" }, "9"] } }, { let: { v: Long.fromNumber(9) } } as never))).to.equal(1);
  });

  it("types accumulators as mongod: $sum of int32 widening, $avg a double, $min/$max/$first/$push as stored", async () => {
    const g = client.db("em_computed_numbers").collection<Row>("group");
    await g.insertMany([
      { _id: 1, k: Long.fromNumber(1), n: new Int32(2147483647), l: Long.fromNumber(2), d: new Double(1) },
      { _id: 2, k: new Int32(1), n: new Int32(1), l: Long.fromNumber(3), d: new Double(2) },
    ]);
    const [grouped] = await g
      .aggregate([
        {
          $group: {
            _id: "$k",
            n: { $sum: "$n" },
            l: { $sum: "$l" },
            d: { $sum: "$d" },
            count: { $sum: new Int32(1) },
            avg: { $avg: "$l" },
            max: { $max: "$l" },
            min: { $min: "$d" },
            first: { $first: "$l" },
            all: { $push: "$l" },
          },
        },
      ])
      .toArray();
    expect(typed(grouped)).to.deep.equal({
      _id: "Long(1)",
      n: "Long(2147483648)",
      l: "Long(5)",
      d: "Double(3)",
      count: "Int32(2)",
      avg: "Double(2.5)",
      max: "Long(3)",
      min: "Double(1)",
      first: "Long(2)",
      all: ["Long(2)", "Long(3)"],
    });
    const [compound] = await g.aggregate([{ $group: { _id: { k: "$k", even: { $eq: [{ $mod: ["$n", new Int32(2)] }, new Int32(1)] } } } }]).toArray();
    expect(typed(compound)).to.deep.equal({ _id: { k: "Long(1)", even: true } });
    const [bucket] = await g
      .aggregate([{ $bucket: { groupBy: "$n", boundaries: [Long.fromNumber(0), new Int32(10)], default: "big", output: { l: { $sum: "$l" } } } }])
      .toArray();
    expect(Object.keys(bucket!)).to.deep.equal(["_id", "l"]);
    expect(typed(bucket)).to.deep.equal({ _id: "Long(0)", l: "Long(3)" });
    const windowed = await g
      .aggregate([
        { $setWindowFields: { sortBy: { _id: -1 }, output: { running: { $sum: "$l", window: { documents: ["unbounded", "current"] } } } } },
        { $project: { l: 1, d: 1, running: 1 } },
      ])
      .toArray();
    expect(typed(windowed)).to.deep.equal([
      { _id: "Int32(2)", l: "Long(3)", d: "Double(2)", running: "Long(3)" },
      { _id: "Int32(1)", l: "Long(2)", d: "Double(1)", running: "Long(5)" },
    ]);
    const ranged = await g
      .aggregate([
        { $setWindowFields: { sortBy: { l: 1 }, output: { near: { $sum: "$l", window: { range: [-1, 0] } } } } },
        { $project: { near: 1 } },
      ])
      .toArray();
    expect(typed(ranged)).to.deep.equal([
      { _id: "Int32(1)", near: "Long(2)" },
      { _id: "Int32(2)", near: "Long(5)" },
    ]);
  });

  it("keeps $min, $max and $addToSet working and typed under a collation", async () => {
    const s = client.db("em_computed_numbers").collection<Row>("collated");
    await s.insertMany([
      { _id: 1, s: "a", n: new Int32(1), l: Long.fromNumber(4) },
      { _id: 2, s: "B", n: new Int32(7) },
      { _id: 3, s: "A", n: new Int32(7) },
    ]);
    const [grouped] = await s
      .aggregate([{ $group: { _id: null, max: { $max: "$s" }, min: { $min: "$n" }, long: { $max: "$l" }, set: { $addToSet: "$s" } } }], {
        collation: { locale: "en", strength: 2 },
      })
      .toArray();
    expect(typed({ ...grouped, set: (grouped!.set as string[]).map((x) => x.toLowerCase()).sort() })).to.deep.equal({
      _id: null,
      max: "B",
      min: "Int32(1)",
      long: "Long(4)",
      set: ["a", "b"],
    });
  });

  it("orders $project's output as mongod: _id, the kept fields in the document's order, then the computed ones", async () => {
    const [doc] = await c.aggregate([{ $project: { x: { $literal: new Int32(1) }, l: 1, two: 1, _id: 1 } }]).toArray();
    expect(Object.keys(doc!)).to.deep.equal(["_id", "two", "l", "x"]);
    expect(typed(doc)).to.deep.equal({ _id: "Int32(1)", two: "Int32(2)", l: "Long(5)", x: "Int32(1)" });
  });

  it("computes find's projected fields as $project does: typed, _id first, mingo's operators over plain numbers", async () => {
    const doc = await c.findOne({ _id: 1 }, { projection: { x: { $add: ["$l", new Int32(1)] }, s: { $toString: "$l" }, l: 1 } });
    expect(Object.keys(doc!)).to.deep.equal(["_id", "l", "x", "s"]);
    expect(typed(doc)).to.deep.equal({ _id: "Int32(1)", l: "Long(5)", x: "Long(6)", s: "5" });
    const updated = await c.findOneAndUpdate({ _id: 1 }, { $set: { touched: true } }, { projection: { q: { $divide: ["$two", new Int32(2)] } } });
    expect(typed(updated)).to.deep.equal({ _id: "Int32(1)", q: "Double(1)" });
  });

  it("$lookup and $unionWith give the joined documents as stored", async () => {
    const other = client.db("em_computed_numbers").collection<Row>("other");
    await other.insertMany([{ _id: 7, ref: new Int32(1), big: Long.fromNumber(8), half: new Double(3) }]);
    const [joined] = await c
      .aggregate([{ $lookup: { from: "other", localField: "_id", foreignField: "ref", as: "found" } }, { $project: { l: 1, found: 1 } }])
      .toArray();
    expect(typed(joined)).to.deep.equal({
      _id: "Int32(1)",
      l: "Long(5)",
      found: [{ _id: "Int32(7)", ref: "Int32(1)", big: "Long(8)", half: "Double(3)" }],
    });
    const unioned = await c.aggregate([{ $project: { l: 1 } }, { $unionWith: { coll: "other" } }]).toArray();
    expect(typed(unioned)).to.deep.equal([
      { _id: "Int32(1)", l: "Long(5)" },
      { _id: "Int32(7)", ref: "Int32(1)", big: "Long(8)", half: "Double(3)" },
    ]);
  });

  it("$unwind keeps each element's type and gives includeArrayIndex as an int64", async () => {
    const docs = await c.aggregate([{ $unwind: { path: "$arr", includeArrayIndex: "at" } }, { $project: { arr: 1, at: 1, l: 1 } }]).toArray();
    expect(typed(docs)).to.deep.equal([
      { _id: "Int32(1)", l: "Long(5)", arr: "Int32(1)", at: "Long(0)" },
      { _id: "Int32(1)", l: "Long(5)", arr: "Double(2.5)", at: "Long(1)" },
      { _id: "Int32(1)", l: "Long(5)", arr: "Long(3)", at: "Long(2)" },
    ]);
  });

  it("types what updates compute: array elements by $inc and $max, pipeline updates' fields", async () => {
    const u = client.db("em_computed_numbers").collection<Row>("updates");
    await u.insertOne({ _id: 1, i: new Int32(5), l: Long.fromNumber(5), arr: [new Int32(1), Long.fromNumber(2), new Int32(3)] });
    await u.updateOne({ _id: 1 }, { $inc: { "arr.0": new Int32(1), "arr.1": new Int32(1) }, $max: { "arr.2": Long.fromNumber(9) } });
    expect(typed((await u.findOne({ _id: 1 }))!.arr)).to.deep.equal(["Int32(2)", "Long(3)", "Long(9)"]);
    await u.updateOne({ _id: 1 }, [{ $set: { n: Long.fromNumber(1), s: { $add: ["$l", new Int32(1)] }, q: { $divide: ["$i", new Int32(5)] } } }]);
    // An int32 written where a double of the same value was is an int32.
    await u.updateOne({ _id: 1 }, [{ $set: { q: new Int32(1) } }]);
    expect(typed(await u.findOne({ _id: 1 }, { projection: { arr: 0 } }))).to.deep.equal({
      _id: "Int32(1)",
      i: "Int32(5)",
      l: "Long(5)",
      n: "Long(1)",
      s: "Long(6)",
      q: "Int32(1)",
    });
  });

  it("$set of an equal value of another number type writes it, at the top and inside a document or array", async () => {
    const u = client.db("em_computed_numbers").collection<Row>("retyped");
    await u.insertOne({ _id: 1, top: new Int32(1), inner: { a: new Int32(1) }, list: [new Int32(1)] });
    const changed = await u.updateOne({ _id: 1 }, { $set: { top: new Double(1), inner: { a: new Double(1) }, list: [Long.fromNumber(1)] } });
    expect(Number(changed.modifiedCount)).to.equal(1);
    expect(typed(await u.findOne({ _id: 1 }))).to.deep.equal({ _id: "Int32(1)", top: "Double(1)", inner: { a: "Double(1)" }, list: ["Long(1)"] });
    // Only the embedded document's number changes type: still a change, as its stored bytes differ.
    const nested = await u.updateOne({ _id: 1 }, { $set: { inner: { a: new Int32(1) } } });
    expect(Number(nested.modifiedCount)).to.equal(1);
    expect(typed((await u.findOne({ _id: 1 }))!.inner)).to.deep.equal({ a: "Int32(1)" });
    // The same value of the same type is no change.
    expect(Number((await u.updateOne({ _id: 1 }, { $set: { inner: { a: new Int32(1) } } })).modifiedCount)).to.equal(0);
  });

  it("$redact drops a document pruned at its top and keeps the others as stored", async () => {
    const kept = await c
      .aggregate([{ $redact: { $cond: [{ $gt: [{ $add: ["$l", new Int32(1)] }, new Int32(100)] }, "$$KEEP", "$$PRUNE"] } }])
      .toArray();
    expect(kept).to.deep.equal([]);
    const all = await c.aggregate([{ $redact: { $cond: [{ $gt: ["$l", new Int32(1)] }, "$$KEEP", "$$PRUNE"] } }, { $project: { l: 1 } }]).toArray();
    expect(typed(all)).to.deep.equal([{ _id: "Int32(1)", l: "Long(5)" }]);
  });

  it("decides filters by value: an arithmetic zero is false in $expr", async () => {
    expect(Number(await c.countDocuments({ $expr: { $subtract: ["$l", "$l"] } }))).to.equal(0);
    expect(Number(await c.countDocuments({ $expr: { $eq: [{ $add: ["$l", new Int32(1)] }, new Int32(6)] } }))).to.equal(1);
  });

  it("answers mongod's errors: division and $mod by zero, 0 to a negative power, $abs of the least int64", async () => {
    const error = async (expr: unknown) => {
      const err = await failure(c.aggregate([{ $project: { r: expr } }]).toArray());
      return [Number(err.code), err.message];
    };
    expect(await error({ $divide: ["$l", new Int32(0)] })).to.deep.equal([2, "can't $divide by zero"]);
    expect(await error({ $mod: ["$l", new Int32(0)] })).to.deep.equal([16610, "can't $mod by zero"]);
    expect(await error({ $pow: [new Int32(0), new Int32(-1)] })).to.deep.equal([28764, "$pow cannot take a base of 0 and a negative exponent"]);
    expect(await error({ $abs: Long.MIN_VALUE })).to.deep.equal([28680, "can't take $abs of long long min"]);
  });

  it("refuses Decimal128 arithmetic (238) rather than answering another type", async function () {
    if (usingRealMongo) this.skip();
    const err = await failure(c.aggregate([{ $project: { r: { $add: [Decimal128.fromString("1.5"), new Int32(1)] } } }]).toArray());
    expect([Number(err.code), err.message]).to.deep.equal([238, "$add of a Decimal128 is not supported by the embedded server"]);
    const sum = await failure(c.aggregate([{ $group: { _id: null, s: { $sum: Decimal128.fromString("1") } } }]).toArray());
    expect(Number(sum.code)).to.equal(238);
  });
});
