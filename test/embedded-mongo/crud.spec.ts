import { expect } from "chai";
import { Long, MongoServerError, ObjectId } from "mongodb";
import { expectLength, useTestDatabase } from "./helpers.ts";

describe("embedded-mongo: CRUD through the official driver", () => {
  const t = useTestDatabase("em_crud");

  it("answers ping and buildInfo", async () => {
    expect(await t.db.command({ ping: 1 })).to.include({ ok: 1 });
    const info = await t.db.admin().command({ buildInfo: 1 });
    expect(info.version).to.be.a("string");
  });

  it("inserts and finds documents, generating ObjectId _ids", async () => {
    const c = t.db.collection("basic");
    const res = await c.insertOne({ name: "ada", age: 36 });
    expect(res.insertedId).to.be.instanceOf(ObjectId);
    const doc = await c.findOne({ name: "ada" });
    expect(doc).to.deep.equal({ _id: res.insertedId, name: "ada", age: 36 });
    expect(await c.findOne({ name: "nobody" })).to.equal(null);
  });

  it("applies $set, $unset, $inc, $push, $pull, $addToSet, $min, $max, $currentDate", async () => {
    interface OpsDoc {
      _id: number;
      n: number;
      tags: string[];
      set?: string[];
      lo: number;
      hi: number;
      gone?: boolean;
      nested?: { x: number };
      at?: Date;
    }
    const c = t.db.collection<OpsDoc>("operators");
    await c.insertOne({ _id: 1, n: 5, tags: ["a"], lo: 10, hi: 10, gone: true });
    const res = await c.updateOne(
      { _id: 1 },
      {
        $set: { "nested.x": 1 },
        $unset: { gone: "" },
        $inc: { n: 2 },
        $push: { tags: "b" },
        $addToSet: { set: "x" },
        $min: { lo: 3 },
        $max: { hi: 30 },
        $currentDate: { at: true },
      },
    );
    expect(res.matchedCount).to.equal(1);
    expect(res.modifiedCount).to.equal(1);
    await c.updateOne({ _id: 1 }, { $pull: { tags: "a" }, $addToSet: { set: "x" } });
    const doc = (await c.findOne({ _id: 1 }))!;
    expect(doc).to.include({ n: 7, lo: 3, hi: 30 });
    expect(doc.tags).to.deep.equal(["b"]);
    expect(doc.set).to.deep.equal(["x"]);
    expect(doc.nested).to.deep.equal({ x: 1 });
    expect(doc).to.not.have.property("gone");
    expect(doc.at).to.be.instanceOf(Date);
  });

  it("reports exact matched/modified counts (no-op updates are not modifications)", async () => {
    const c = t.db.collection("counts");
    await c.insertMany([
      { k: 1, v: 1 },
      { k: 1, v: 2 },
      { k: 2, v: 1 },
    ]);
    const same = await c.updateMany({ k: 1 }, { $set: { v: 1 } });
    expect(same.matchedCount).to.equal(2);
    expect(same.modifiedCount).to.equal(1);
    const none = await c.updateOne({ k: 99 }, { $set: { v: 1 } });
    expect(none.matchedCount).to.equal(0);
    expect(none.upsertedCount).to.equal(0);
  });

  it("upserts seeded from the query's equality fields, with $setOnInsert only on insert", async () => {
    const c = t.db.collection("upserts");
    const first = await c.updateOne(
      { key: "k1", "meta.tenant": "t1", score: { $gt: 5 } },
      { $inc: { hits: 1 }, $setOnInsert: { createdAt: "first" } },
      { upsert: true },
    );
    expect(first.upsertedCount).to.equal(1);
    expect(first.upsertedId).to.be.instanceOf(ObjectId);
    expect(first.matchedCount).to.equal(0);
    const second = await c.updateOne(
      { key: "k1", "meta.tenant": "t1" },
      { $inc: { hits: 1 }, $setOnInsert: { createdAt: "second" } },
      { upsert: true },
    );
    expect(second.upsertedCount).to.equal(0);
    expect(second.modifiedCount).to.equal(1);
    const doc = await c.findOne({ key: "k1" }, { projection: { _id: 0 } });
    expect(doc).to.deep.equal({ key: "k1", meta: { tenant: "t1" }, hits: 2, createdAt: "first" });
  });

  it("upserts with an _id in the query use that _id; $eq and one-element $in seed too", async () => {
    const c = t.db.collection("upsert_id");
    const res = await c.updateOne({ _id: "fixed" as never }, { $set: { a: 1 } }, { upsert: true });
    expect(res.upsertedId).to.equal("fixed");
    await c.updateOne(
      { _id: "other" as never, kind: { $eq: "x" }, tag: { $in: ["t"] }, many: { $in: [1, 2] } },
      { $set: { a: 2 } },
      { upsert: true },
    );
    expect(await c.findOne({ _id: "other" as never })).to.deep.equal({ _id: "other", kind: "x", tag: "t", a: 2 });
  });

  it("findOneAndUpdate honours sort, returnDocument and upsert", async () => {
    const c = t.db.collection("fam");
    await c.insertMany([
      { q: "x", p: 2 },
      { q: "x", p: 9 },
      { q: "x", p: 5 },
    ]);
    const before = await c.findOneAndUpdate({ q: "x" }, { $set: { picked: true } }, { sort: { p: -1 }, returnDocument: "before" });
    expect(before).to.include({ p: 9 });
    expect(before).to.not.have.property("picked");
    const after = await c.findOneAndUpdate(
      { q: "x", picked: { $exists: false } },
      { $set: { picked: true } },
      { sort: { p: 1 }, returnDocument: "after" },
    );
    expect(after).to.include({ p: 2, picked: true });
    const counter = await c.findOneAndUpdate({ q: "counter" }, { $inc: { n: 1 } }, { upsert: true, returnDocument: "after" });
    expect(counter).to.include({ q: "counter", n: 1 });
    const again = await c.findOneAndUpdate(
      { q: "counter" },
      { $inc: { n: 1 } },
      { upsert: true, returnDocument: "after", includeResultMetadata: true },
    );
    expect(again.value).to.include({ n: 2 });
    expect(again.lastErrorObject).to.include({ n: 1, updatedExisting: true });
    expect(await c.findOneAndUpdate({ q: "missing" }, { $set: { a: 1 } })).to.equal(null);
  });

  it("findOneAndDelete and findOneAndReplace", async () => {
    const c = t.db.collection("famd");
    await c.insertMany([
      { g: 1, v: "a" },
      { g: 1, v: "b" },
    ]);
    const deleted = await c.findOneAndDelete({ g: 1 }, { sort: { v: -1 } });
    expect(deleted).to.include({ v: "b" });
    const replaced = await c.findOneAndReplace({ g: 1 }, { g: 2, v: "z" }, { returnDocument: "after" });
    expect(replaced).to.include({ g: 2, v: "z" });
    expect(await c.countDocuments()).to.equal(1);
  });

  it("countDocuments, estimatedDocumentCount, distinct", async () => {
    const c = t.db.collection("countdocs");
    await c.insertMany(Array.from({ length: 30 }, (_, i) => ({ i, parity: i % 2, tags: [i % 3] })));
    expect(await c.countDocuments()).to.equal(30);
    expect(await c.countDocuments({ parity: 1 })).to.equal(15);
    expect(await c.countDocuments({ i: { $gte: 10 } }, { skip: 5, limit: 3 })).to.equal(3);
    expect(await c.estimatedDocumentCount()).to.equal(30);
    expect(await c.distinct("parity")).to.deep.equal([0, 1]);
    expect(await c.distinct("tags", { i: { $lt: 3 } })).to.deep.equal([0, 1, 2]);
  });

  it("deleteOne and deleteMany report exact counts", async () => {
    const c = t.db.collection("deletes");
    await c.insertMany([{ d: 1 }, { d: 1 }, { d: 1 }, { d: 2 }]);
    expect((await c.deleteOne({ d: 1 })).deletedCount).to.equal(1);
    expect((await c.deleteMany({ d: 1 })).deletedCount).to.equal(2);
    expect((await c.deleteMany({ d: 42 })).deletedCount).to.equal(0);
    expect(await c.countDocuments()).to.equal(1);
  });

  it("distinguishes null from missing", async () => {
    const c = t.db.collection("nulls");
    await c.insertMany([{ _id: 1, v: null }, { _id: 2 }, { _id: 3, v: 0 }] as never[]);
    const ids = async (f: object) => (await c.find(f).sort({ _id: 1 }).toArray()).map((d) => d._id);
    expect(await ids({ v: null })).to.deep.equal([1, 2]);
    expect(await ids({ v: { $exists: false } })).to.deep.equal([2]);
    expect(await ids({ v: { $type: "null" } })).to.deep.equal([1]);
    expect(await ids({ v: { $ne: null } })).to.deep.equal([3]);
  });

  // mongod's $type tests each element of an array (and "array" the array itself), whatever the type named.
  it("answers $type by an array's elements, ObjectIds included, and never for a missing field", async () => {
    const c = t.db.collection("types");
    const oid = new ObjectId();
    await c.insertMany([
      { _id: 1, v: ["x", 2] },
      { _id: 2, v: [oid] },
      { _id: 3, v: [null] },
      { _id: 4, v: [["x"]] },
      { _id: 5, v: oid },
      { _id: 6 },
    ] as never[]);
    const ids = async (f: object) => (await c.find(f).sort({ _id: 1 }).toArray()).map((d) => d._id);
    expect(await ids({ v: { $type: "string" } })).to.deep.equal([1]);
    expect(await ids({ v: { $type: "int" } })).to.deep.equal([1]);
    expect(await ids({ v: { $type: "objectId" } })).to.deep.equal([2, 5]);
    expect(await ids({ v: { $type: "null" } })).to.deep.equal([3]);
    expect(await ids({ v: { $type: "array" } })).to.deep.equal([1, 2, 3, 4]);
    expect(await ids({ v: { $type: ["string", "objectId"] } })).to.deep.equal([1, 2, 5]);
  });

  it("compares Int64 values with other numbers", async () => {
    const c = t.db.collection("longs");
    await c.insertMany([
      { _id: 1, n: Long.fromNumber(5) },
      { _id: 2, n: 7.5 },
      { _id: 3, n: 3 },
    ] as never[]);
    const sorted = (
      await c
        .find({ n: { $gte: Long.fromNumber(4) } })
        .sort({ n: 1 })
        .toArray()
    ).map((d) => d._id);
    expect(sorted).to.deep.equal([1, 2]);
    expect(await c.countDocuments({ n: 5 })).to.equal(1);
  });

  it("compares Int64 values beyond 2^53 exactly in ranges and sorts", async () => {
    const c = t.db.collection("big_longs");
    const big = (s: string) => Long.fromString(s);
    await c.insertMany([
      { _id: 1, n: big("9007199254740993") },
      { _id: 2, n: big("10000000000000000") },
      { _id: 3, n: big("-9007199254740995") },
      { _id: 4, n: 12 },
    ] as never[]);
    const ids = async (f: object) => (await c.find(f).sort({ n: 1 }).toArray()).map((d) => d._id);
    expect(await ids({})).to.deep.equal([3, 4, 1, 2]);
    expect(await ids({ n: { $gt: big("9007199254740992") } })).to.deep.equal([1, 2]);
    expect(await ids({ n: { $lt: 100 } })).to.deep.equal([3, 4]);
    const doc = await c.findOne({ _id: 2 as never });
    expect(doc!.n).to.be.instanceOf(Long);
    expect(doc!.n.toString()).to.equal("10000000000000000");
  });

  it("matches range operators within one BSON type bracket; {$gte: null} matches missing", async () => {
    const c = t.db.collection("brackets");
    await c.insertMany([{ _id: 1, v: 5 }, { _id: 2, v: "6" }, { _id: 3, v: new Date(0) }, { _id: 4 }, { _id: 5, v: null }] as never[]);
    const ids = async (f: object) => (await c.find(f).sort({ _id: 1 }).toArray()).map((d) => d._id);
    expect(await ids({ v: { $gt: 1 } })).to.deep.equal([1]);
    expect(await ids({ v: { $gte: "" } })).to.deep.equal([2]);
    expect(await ids({ v: { $gte: null } })).to.deep.equal([4, 5]);
  });

  it("sorts mixed BSON types in mongod's type order", async () => {
    const c = t.db.collection("typeorder");
    const oid = new ObjectId();
    const values = [true, "str", 10, null, oid, new Date(0), { a: 1 }, [5]];
    await c.insertMany(values.map((v, i) => ({ _id: i, v })) as never[]);
    await c.insertOne({ _id: 99 } as never); // missing sorts with null
    const order = (await c.find().sort({ v: 1, _id: 1 }).toArray()).map((d) => d._id);
    // null(3), missing(99), number 10 (2) and [5] -> 5 sorts as number (7), string(1), object(6), ObjectId(4), bool(0), date(5)
    expect(order).to.deep.equal([3, 99, 7, 2, 1, 6, 4, 0, 5]);
  });

  it("refuses to change _id", async () => {
    const c = t.db.collection("immutable");
    await c.insertOne({ _id: 1 as never });
    const err = await c.updateOne({ _id: 1 as never }, { $set: { _id: 2 } }).catch((e) => e);
    expect(err).to.be.instanceOf(MongoServerError);
    expect(err.code).to.equal(66);
  });

  it("rejects conflicting operators and non-numeric $inc like mongod", async () => {
    const c = t.db.collection("update_errors");
    await c.insertOne({ _id: 1 as never, s: "text", a: { b: 1 } });
    const conflict = await c.updateOne({ _id: 1 as never }, { $set: { a: 1 }, $inc: { "a.b": 1 } }).catch((e) => e);
    expect(conflict).to.be.instanceOf(MongoServerError);
    expect(conflict.code).to.equal(40);
    const notNumber = await c.updateOne({ _id: 1 as never }, { $inc: { s: 1 } }).catch((e) => e);
    expect(notNumber.code).to.equal(14);
    const unknown = await t.db.command({ update: "update_errors", updates: [{ q: {}, u: { $frobnicate: { a: 1 } } }] }).catch((e) => e);
    expect(unknown.writeErrors?.[0]?.code ?? unknown.code).to.equal(9);
  });

  it("updates nested paths and arrays through positional and array operators", async () => {
    const c = t.db.collection<{ _id: number; items: { sku: string; qty: number }[]; meta: { v: number } }>("nested_updates");
    await c.insertOne({
      _id: 1,
      items: [
        { sku: "a", qty: 1 },
        { sku: "b", qty: 2 },
      ],
      meta: { v: 1 },
    });
    await c.updateOne({ _id: 1, "items.sku": "b" }, { $inc: { "items.$.qty": 5, "meta.v": 1 } });
    await c.updateOne({ _id: 1 }, { $push: { items: { $each: [{ sku: "c", qty: 0 }], $slice: -2 } } });
    const doc = await c.findOne({ _id: 1 });
    expect(doc).to.deep.equal({
      _id: 1,
      items: [
        { sku: "b", qty: 7 },
        { sku: "c", qty: 0 },
      ],
      meta: { v: 2 },
    });
  });

  it("findOneAndUpdate claims are atomic across pooled connections", async () => {
    const c = t.db.collection("claims");
    await c.insertMany(Array.from({ length: 100 }, (_, i) => ({ _id: i, owner: null })) as never[]);
    const claims = await Promise.all(
      Array.from({ length: 250 }, (_, worker) =>
        c.findOneAndUpdate({ owner: null }, { $set: { owner: worker } }, { sort: { _id: 1 }, returnDocument: "after" }),
      ),
    );
    const won = claims.filter((d) => d !== null);
    expect(won).to.have.length(100);
    expect(new Set(won.map((d) => d!._id)).size).to.equal(100);
    expect(await c.countDocuments({ owner: null })).to.equal(0);
  });

  it("rate-limit style counters: concurrent upserts with $inc create one document", async () => {
    const c = t.db.collection("counters");
    await c.createIndex({ key: 1, window: 1 }, { unique: true });
    await Promise.all(
      Array.from({ length: 50 }, () =>
        c.findOneAndUpdate(
          { key: "k", window: 7 },
          { $inc: { n: 1 }, $setOnInsert: { expiresAt: new Date(0) } },
          { upsert: true, returnDocument: "after" },
        ),
      ),
    );
    const docs = await c.find({ key: "k" }).toArray();
    expectLength(docs, 1);
    expect(docs[0].n).to.equal(50);
  });

  it("bulkWrite reports exact inserted, matched, modified, upserted and deleted counts", async () => {
    const c = t.db.collection("bulk");
    await c.insertMany([
      { _id: 1, v: 1 },
      { _id: 2, v: 2 },
      { _id: 3, v: 3 },
    ] as never[]);
    const res = await c.bulkWrite([
      { insertOne: { document: { _id: 4, v: 4 } as never } },
      { updateOne: { filter: { _id: 1 }, update: { $set: { v: 10 } } } },
      { updateOne: { filter: { _id: 2 }, update: { $set: { v: 2 } } } },
      { updateMany: { filter: { v: { $gte: 3 } }, update: { $inc: { v: 1 } } } },
      { updateOne: { filter: { _id: 9 }, update: { $set: { v: 9 } }, upsert: true } },
      { replaceOne: { filter: { _id: 3 }, replacement: { v: 30 } } },
      { deleteOne: { filter: { _id: 2 } } },
      { deleteMany: { filter: { v: { $gt: 1000 } } } },
    ] as never[]);
    expect(res.insertedCount).to.equal(1);
    expect(res.matchedCount).to.equal(6); // 1 + 1 + 3 (v 3,4,10) + 1
    expect(res.modifiedCount).to.equal(5);
    expect(res.upsertedCount).to.equal(1);
    expect(res.upsertedIds).to.deep.equal({ 4: 9 });
    expect(res.deletedCount).to.equal(1);
    const docs = await c.find().sort({ _id: 1 }).toArray();
    expect(docs).to.deep.equal([
      { _id: 1, v: 11 },
      { _id: 3, v: 30 },
      { _id: 4, v: 5 },
      { _id: 9, v: 9 },
    ]);
  });
});
