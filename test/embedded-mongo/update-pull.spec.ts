import { expect } from "chai";
import { Double, Int32, Long, type Document, type UpdateOptions } from "mongodb";
import { useTestDatabase } from "./helpers.ts";

type Numbered = { _id: number; [field: string]: unknown };

// $pull, alone or beside the field operators, as mongod applies it (elements keep their stored types).
describe("embedded-mongo: $pull", function () {
  this.timeout(20000);
  const t = useTestDatabase("update_pull");
  const coll = () => t.db.collection<Numbered>("p");
  const raw = (id: number) => coll().findOne({ _id: id }, { promoteValues: false });
  // The driver's types know $pull only of typed schemas' array fields.
  const update = (id: number, spec: Document, options?: UpdateOptions) => coll().updateOne({ _id: id }, spec, options);

  beforeEach(async () => {
    await coll().deleteMany({});
  });

  it("removes equal values and keeps the other elements with their stored types", async () => {
    await coll().insertOne({ _id: 1, a: [new Double(2), 3, new Double(4), Long.fromNumber(3)], n: Long.fromNumber(7) });
    const r = await update(1, { $pull: { a: 3 } });
    expect(r.modifiedCount).to.equal(1);
    expect(await raw(1)).to.deep.equal({ _id: new Int32(1), a: [new Double(2), new Double(4)], n: Long.fromNumber(7) });
  });

  it("applies a compaction: $unset and $max beside $pull of a value and of object elements by a condition", async () => {
    await coll().insertOne({
      _id: 2,
      ledger: { inflight: { t1: 1, t2: 2 }, moves: { t1: "m" }, inflight_ids: ["t1", "t2"], compacted_through: Long.fromNumber(3) },
      outbox: [{ id: "e1" }, { id: "e2", x: 1 }, { id: "e3" }],
    });
    const r = await update(2, {
      $unset: { "ledger.inflight.t1": "", "ledger.moves.t1": "" },
      $pull: { "ledger.inflight_ids": "t1", outbox: { id: { $in: ["e1", "e2"] } } },
      $max: { "ledger.compacted_through": Long.fromNumber(5) },
    });
    expect(r.modifiedCount).to.equal(1);
    expect(await raw(2)).to.deep.equal({
      _id: new Int32(2),
      ledger: { inflight: { t2: new Int32(2) }, moves: {}, inflight_ids: ["t2"], compacted_through: Long.fromNumber(5) },
      outbox: [{ id: "e3" }],
    });
  });

  it("removes object elements by conditions on their fields as a query matches them (arrays, number types, null)", async () => {
    await coll().insertOne({
      _id: 5,
      outbox: [{ id: "e1" }, { id: ["e2", "x"] }, { id: Long.fromNumber(3) }, { id: new Double(3) }, { other: 1 }, "e2", 3, { id: null }],
    });
    await update(5, { $pull: { outbox: { id: { $in: ["e2", 3] } } } });
    expect(await raw(5)).to.deep.equal({ _id: new Int32(5), outbox: [{ id: "e1" }, { other: new Int32(1) }, "e2", new Int32(3), { id: null }] });
    await update(5, { $pull: { outbox: { id: null } } });
    expect(await raw(5)).to.deep.equal({ _id: new Int32(5), outbox: [{ id: "e1" }, "e2", new Int32(3)] });
    await update(5, { $pull: { outbox: { id: "e1", other: { $exists: false } } } });
    expect(await raw(5)).to.deep.equal({ _id: new Int32(5), outbox: ["e2", new Int32(3)] });
  });

  it("changes nothing when nothing matches or the path is missing (no parent is created)", async () => {
    await coll().insertOne({ _id: 3, a: [1, 2] });
    const r = await update(3, { $pull: { a: { $gt: 5 }, "b.c": 1 } });
    expect(r.matchedCount).to.equal(1);
    expect(r.modifiedCount).to.equal(0);
    expect(await coll().findOne({ _id: 3 })).to.deep.equal({ _id: 3, a: [1, 2] });
    await update(3, { $pull: { a: { $lt: 2 } } });
    expect(await coll().findOne({ _id: 3 })).to.deep.equal({ _id: 3, a: [2] });
  });

  it("refuses a $pull of a field that is not an array with 2 BadValue", async () => {
    await coll().insertOne({ _id: 4, a: 1 });
    const err = await update(4, { $pull: { a: 1 } }).catch((e) => e);
    expect(err.code).to.equal(2);
    expect(err.message).to.equal("Cannot apply $pull to a non-array value");
  });

  it("compares strings under the statement's collation", async () => {
    await coll().insertOne({ _id: 5, tags: ["Red", "blue", "RED"] });
    await update(5, { $pull: { tags: "red" } }, { collation: { locale: "en", strength: 2 } });
    expect(await coll().findOne({ _id: 5 })).to.deep.equal({ _id: 5, tags: ["blue"] });
  });
});
