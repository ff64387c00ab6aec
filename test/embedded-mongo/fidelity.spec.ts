import { expect } from "chai";
import type { Document } from "mongodb";
import { failure, useTestDatabase } from "./helpers.ts";

// Cases where the embedded server used to answer differently from mongod; each runs through the official driver.
describe("embedded-mongo: fidelity to mongod", () => {
  const t = useTestDatabase("em_fidelity");

  describe("positional updates", () => {
    const seed = {
      _id: 1,
      c: [
        { a: 0, b: 0, k: 1 },
        { a: 5, b: 5, k: 2 },
        { a: 3, b: 3, k: 3 },
      ],
    };
    const fresh = async (name: string) => {
      const c = t.db.collection<{ _id: number; c: Document[] }>(name);
      await c.deleteMany({});
      await c.insertOne(structuredClone(seed));
      return c;
    };

    it("sets two fields of the element matched by $", async () => {
      const c = await fresh("pos");
      const res = await c.updateOne({ "c.k": 2 }, { $set: { "c.$.a": 1, "c.$.b": 2 } });
      expect(res.modifiedCount).to.equal(1);
      expect((await c.findOne({}))!.c[1]).to.deep.equal({ a: 1, b: 2, k: 2 });
      await c.updateOne({ "c.k": 3 }, { $inc: { "c.$.a": 10, "c.$.b": 20 } });
      expect((await c.findOne({}))!.c[2]).to.deep.equal({ a: 13, b: 23, k: 3 });
    });

    it("resolves $ once, even when the update changes the matched field", async () => {
      const c = await fresh("pos_once");
      await c.updateOne({ "c.k": 2 }, { $set: { "c.$.k": 20, "c.$.a": 7 } });
      expect((await c.findOne({}))!.c[1]).to.deep.equal({ a: 7, b: 5, k: 20 });
    });

    it("updates two fields of every element with $[] and of filtered ones with $[e]", async () => {
      const c = await fresh("all_positional");
      await c.updateOne({}, { $set: { "c.$[].a": 9, "c.$[].b": 8 } });
      expect((await c.findOne({}))!.c.map((e: Document) => [e.a, e.b])).to.deep.equal([
        [9, 8],
        [9, 8],
        [9, 8],
      ]);
      await c.updateOne({}, { $set: { "c.$[e].a": 1, "c.$[e].k": 0 } }, { arrayFilters: [{ "e.k": { $gte: 2 } }] });
      // Array filters see the document as it was before the update.
      expect((await c.findOne({}))!.c).to.deep.equal([
        { a: 9, b: 8, k: 1 },
        { a: 1, b: 8, k: 0 },
        { a: 1, b: 8, k: 0 },
      ]);
    });

    it("answers mongod's errors for unusable positional paths and array filters", async () => {
      const c = await fresh("pos_errors");
      expect((await failure(c.updateOne({ _id: 1 }, { $set: { "c.$.a": 1 } } as Document))).code).to.equal(2);
      expect((await failure(c.updateOne({}, { $set: { "c.$[x].a": 1 } }))).code).to.equal(2);
      expect((await failure(c.updateOne({}, { $set: { "c.0.a": 1 } }, { arrayFilters: [{ "x.a": 1 }] }))).code).to.equal(9);
      expect((await failure(c.updateOne({}, { $set: { "nope.$[].a": 1 } }))).code).to.equal(2);
    });
  });

  describe("queries, projections and $pull", () => {
    before(async () => {
      await t.db.collection("q").insertMany([
        { _id: 1, a: "x", s: [1, 5, 9], n: [1, 2, 3], m: [{ t: "a" }, { t: "b" }, { t: "c" }] },
        { _id: 2, a: ["x", "y"], s: [2], n: [4] },
      ] as Document[]);
    });

    it("$all matches a scalar equal to its only value, and arrays containing every value", async () => {
      const ids = (
        await t.db
          .collection("q")
          .find({ a: { $all: ["x"] } })
          .toArray()
      ).map((d) => d._id);
      expect(ids).to.deep.equal([1, 2]);
      expect(await t.db.collection("q").countDocuments({ a: { $all: ["x", "y"] } })).to.equal(1);
      expect(await t.db.collection("q").countDocuments({ a: { $all: [] } })).to.equal(0);
    });

    it("projects $elemMatch on an array of scalars", async () => {
      const doc = await t.db.collection("q").findOne({ _id: 1 } as Document, { projection: { s: { $elemMatch: { $gt: 4 } } } });
      expect(doc).to.deep.equal({ _id: 1, s: [5] });
    });

    it("accepts $slice next to an exclusion", async () => {
      const doc = await t.db.collection("q").findOne({ _id: 1 } as Document, { projection: { a: 0, m: 0, s: 0, n: { $slice: 1 } } });
      expect(doc).to.deep.equal({ _id: 1, n: [1] });
    });

    it("$pull with an $or condition removes the matching array documents", async () => {
      const c = t.db.collection("pull");
      await c.insertOne({ _id: 1, m: [{ t: "a" }, { t: "b" }, { t: "c" }, 4] } as Document);
      await c.updateOne({ _id: 1 } as Document, { $pull: { m: { $or: [{ t: "a" }, { t: "c" }] } } } as Document);
      expect((await c.findOne({}))!.m).to.deep.equal([{ t: "b" }, 4]);
      await c.updateOne({ _id: 1 } as Document, { $pull: { m: { $gte: 4 } } } as Document);
      expect((await c.findOne({}))!.m).to.deep.equal([{ t: "b" }]);
    });
  });

  describe("pipeline updates", () => {
    it("applies $replaceWith with $setField", async () => {
      const c = t.db.collection("pipe");
      await c.insertOne({ _id: 1, a: 1 } as Document);
      await c.updateOne({ _id: 1 } as Document, [{ $replaceWith: { $setField: { field: "b", input: "$$ROOT", value: 2 } } }]);
      expect(await c.findOne({})).to.deep.equal({ _id: 1, a: 1, b: 2 });
    });

    it("keeps _id when the pipeline's output has none", async () => {
      const c = t.db.collection("pipe_id");
      await c.insertOne({ _id: 1, a: 1, b: 2 } as Document);
      const res = await c.updateOne({ _id: 1 } as Document, [{ $project: { _id: 0, a: 1 } }]);
      expect(res.modifiedCount).to.equal(1);
      expect(await c.findOne({})).to.deep.equal({ _id: 1, a: 1 });
      const changed = await failure(c.updateOne({ _id: 1 } as Document, [{ $set: { _id: 2 } }]));
      expect(changed.code).to.equal(66);
      const stage = await failure(c.updateOne({ _id: 1 } as Document, [{ $group: { _id: null } }]));
      expect(stage.code).to.equal(72);
      // The driver refuses a stage without an operator before sending it: the raw command reaches the server.
      const empty = await t.db.command({ update: "pipe_id", updates: [{ q: { _id: 1 }, u: [{}] }] });
      expect(empty.writeErrors[0].code).to.equal(40323);
    });
  });

  describe("parse errors carry mongod's codes", () => {
    it("reports an invalid delete filter in writeErrors", async () => {
      const reply = await t.db.command({ delete: "q", deletes: [{ q: { $foo: 1 }, limit: 0 }] });
      expect(reply.ok).to.equal(1);
      expect(reply.n).to.equal(0);
      expect(reply.writeErrors).to.have.length(1);
      expect(reply.writeErrors[0]).to.include({ index: 0, code: 2 });
      const err = await failure(t.db.collection("q").deleteMany({ $foo: 1 } as Document));
      expect(err.code).to.equal(2);
    });

    it("answers 2 for unknown query operators, 40324 for unknown stages, 168 for unknown expressions", async () => {
      expect((await failure(t.db.collection("q").findOne({ a: { $foo: 1 } }))).code).to.equal(2);
      expect((await failure(t.db.collection("q").findOne({ $foo: 1 } as Document))).code).to.equal(2);
      expect(
        (
          await failure(
            t.db
              .collection("q")
              .aggregate([{ $foo: 1 }])
              .toArray(),
          )
        ).code,
      ).to.equal(40324);
      expect(
        (
          await failure(
            t.db
              .collection("q")
              .aggregate([{ $project: { x: { $foo: 1 } } }])
              .toArray(),
          )
        ).code,
      ).to.equal(168);
      expect(
        (
          await failure(
            t.db
              .collection("q")
              .aggregate([{ $group: { _id: null, x: { $foo: 1 } } }])
              .toArray(),
          )
        ).code,
      ).to.equal(15952);
    });
  });
});
