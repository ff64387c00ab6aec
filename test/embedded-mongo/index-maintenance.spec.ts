// Index entries follow every write, including the writes that skip an index because none of the fields its keys
// depend on changed: the key paths, and the fields of a partial filter.
import { expect } from "chai";
import { type Document, Double, Long, MongoServerError } from "mongodb";
import { useTestDatabase } from "./helpers.ts";

describe("embedded-mongo: index maintenance on update", () => {
  const t = useTestDatabase("em_index_maintenance");

  it("moves a document in an index when its key changes, and not when another field does", async () => {
    const c = t.db.collection<Document>("keys");
    await c.createIndex({ "a.b": 1 }, { name: "ab" });
    await c.insertMany([
      { _id: 1 as never, a: { b: 1 }, n: 0 },
      { _id: 2 as never, a: { b: 2 }, n: 0 },
    ]);
    await c.updateOne({ _id: 1 as never }, { $inc: { n: 1 } });
    await c.updateOne({ _id: 2 as never }, { $set: { "a.b": 3 } });
    await c.updateOne({ _id: 1 as never }, { $set: { "a.c": 9 } });
    const byKey = async (b: number) => (await c.find({ "a.b": b }, { hint: "ab" }).toArray()).map((d) => d._id);
    expect(await byKey(1)).to.deep.equal([1]);
    expect(await byKey(2)).to.deep.equal([]);
    expect(await byKey(3)).to.deep.equal([2]);
  });

  it("follows an indexed array as it grows and shrinks, entry by entry, and knows the index became multikey", async () => {
    const c = t.db.collection<Document>("arrays");
    await c.createIndex({ tags: 1 }, { name: "tags" });
    await c.insertOne({ _id: 1 as never, tags: ["a"] });
    for (const tag of ["b", "c", "d"]) await c.updateOne({ _id: 1 as never }, { $push: { tags: tag } as Document });
    await c.updateOne({ _id: 1 as never }, { $pull: { tags: "b" } as Document });
    const byTag = async (tag: string) => (await c.find({ tags: tag }, { hint: "tags" }).toArray()).length;
    expect([await byTag("a"), await byTag("b"), await byTag("c"), await byTag("d")]).to.deep.equal([1, 0, 1, 1]);
    // Bounds of a multikey index cannot be intersected: {$gt: "c", $lt: "b"} matches through different elements.
    expect(await c.countDocuments({ tags: { $gt: "c", $lt: "b" } }, { hint: "tags" })).to.equal(1);
    const explained = await c.find({ tags: "a" }, { hint: "tags" }).explain("queryPlanner");
    expect(JSON.stringify(explained)).to.include('"isMultiKey":true');
  });

  it("indexes an array's equal elements once, whatever their numeric type, and a unique index lets its own repeats be", async () => {
    const c = t.db.collection<Document>("repeats");
    await c.createIndex({ v: 1 }, { name: "v", unique: true });
    await c.insertOne({ _id: 1 as never, v: [1, new Double(1), Long.fromNumber(1), "1", new Date(5), new Date(5), null, null] });
    await c.updateOne({ _id: 1 as never }, { $push: { v: { $each: [Long.fromNumber(2), 2] } } as Document });
    expect(await c.countDocuments({ v: 1 }, { hint: "v" })).to.equal(1);
    expect(await c.countDocuments({ v: 2 }, { hint: "v" })).to.equal(1);
    expect(await c.countDocuments({ v: { $gte: 0 } }, { hint: "v" })).to.equal(1);
    const error = (await c.insertOne({ _id: 2 as never, v: [Long.fromNumber(2)] }).catch((e: unknown) => e)) as MongoServerError;
    expect(error).to.be.instanceOf(MongoServerError);
    expect(error.code).to.equal(11000);
  });

  it("frees the unique key a document moves from, from a scalar to an array and back, and refuses the keys it takes", async () => {
    const c = t.db.collection<Document>("moves");
    await c.createIndex({ code: 1 }, { name: "code", unique: true });
    await c.insertMany([
      { _id: 1 as never, code: "a" },
      { _id: 2 as never, code: "b" },
    ]);
    const duplicate = async (doc: Document) => ((await c.insertOne(doc).catch((e: unknown) => e)) as MongoServerError).code;
    await c.updateOne({ _id: 1 as never }, { $set: { code: "c" } });
    await c.insertOne({ _id: 3 as never, code: "a" });
    expect(await duplicate({ _id: 4, code: "c" })).to.equal(11000);
    await c.updateOne({ _id: 2 as never }, { $set: { code: ["b", "d"] } });
    expect(await duplicate({ _id: 4, code: "d" })).to.equal(11000);
    await c.updateOne({ _id: 2 as never }, { $set: { code: "e" } });
    await c.insertMany([
      { _id: 4 as never, code: "d" },
      { _id: 5 as never, code: "b" },
    ]);
    const byCode = async (code: string) => (await c.find({ code }, { hint: "code" }).toArray()).map((d) => d._id);
    expect([await byCode("a"), await byCode("b"), await byCode("c"), await byCode("d"), await byCode("e")]).to.deep.equal([[3], [5], [1], [4], [2]]);
  });

  it("applies a partial unique index when only a field of its filter changes", async () => {
    const c = t.db.collection<Document>("partial");
    await c.createIndex({ email: 1 }, { unique: true, name: "email_active", partialFilterExpression: { active: true } });
    await c.insertMany([
      { _id: 1 as never, email: "a@x", active: true },
      { _id: 2 as never, email: "a@x", active: false },
    ]);
    const error = (await c.updateOne({ _id: 2 as never }, { $set: { active: true } }).catch((e: unknown) => e)) as MongoServerError;
    expect(error).to.be.instanceOf(MongoServerError);
    expect(error.code).to.equal(11000);
    await c.updateOne({ _id: 1 as never }, { $set: { active: false } });
    await c.updateOne({ _id: 2 as never }, { $set: { active: true } });
    expect((await c.find({ email: "a@x", active: true }, { hint: "email_active" }).toArray()).map((d) => d._id)).to.deep.equal([2]);
  });
});
