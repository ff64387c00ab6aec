import { expect } from "chai";
import { Double, Int32, Long } from "mongodb";
import { cursorIdOf, useTestDatabase, usingRealMongo } from "./helpers.ts";

describe("embedded-mongo: cursors", () => {
  const t = useTestDatabase("em_cursors");

  before(async () => {
    await t.db.collection("many").insertMany(Array.from({ length: 1000 }, (_, i) => ({ i, pad: "x".repeat(50) })));
  });

  it("iterates several batches in order", async () => {
    const docs = await t.db.collection("many").find({}, { batchSize: 7 }).sort({ i: 1 }).toArray();
    expect(docs).to.have.length(1000);
    expect(docs.map((d) => d.i)).to.deep.equal(Array.from({ length: 1000 }, (_, i) => i));
  });

  it("uses Int64 cursor ids and getMore batches of batchSize", async () => {
    // promoteLongs off: the driver otherwise answers an Int64 below 2^53 as a number, and a random cursor id is one
    // about once in a thousand times (mongod's as well as this server's).
    const reply = await t.db.command({ find: "many", filter: {}, batchSize: 10 }, { promoteLongs: false });
    expect(reply.cursor.id).to.be.instanceOf(Long);
    expect(reply.cursor.id.isZero()).to.equal(false);
    expect(reply.cursor.firstBatch).to.have.length(10);
    const more = await t.db.command({ getMore: reply.cursor.id, collection: "many", batchSize: 25 });
    expect(more.cursor.nextBatch).to.have.length(25);
    expect(more.cursor.nextBatch[0].i).to.equal(10);
    const killed = await t.db.command({ killCursors: "many", cursors: [reply.cursor.id] });
    expect(killed.cursorsKilled).to.have.length(1);
    const err = await t.db.command({ getMore: reply.cursor.id, collection: "many" }).catch((e) => e);
    expect(err.code).to.equal(43);
  });

  it("closes the cursor (id 0) when limit or singleBatch ends the result", async () => {
    const limited = await t.db.command({ find: "many", filter: {}, limit: 5 });
    expect(limited.cursor.firstBatch).to.have.length(5);
    expect(Number(limited.cursor.id)).to.equal(0);
    const single = await t.db.command({ find: "many", filter: {}, batchSize: 3, singleBatch: true });
    expect(single.cursor.firstBatch).to.have.length(3);
    expect(Number(single.cursor.id)).to.equal(0);
    const defaults = await t.db.command({ find: "many", filter: {} });
    expect(defaults.cursor.firstBatch).to.have.length(101);
  });

  it("applies skip, limit and projection across batches", async () => {
    const docs = await t.db
      .collection("many")
      .find({ i: { $gte: 100 } }, { projection: { _id: 0, i: 1 }, batchSize: 4 })
      .sort({ i: -1 })
      .skip(3)
      .limit(10)
      .toArray();
    expect(docs).to.deep.equal(Array.from({ length: 10 }, (_, k) => ({ i: 996 - k })));
  });

  it("kills the server cursor when the driver's cursor is closed early", async () => {
    const cursor = t.db.collection("many").find({}, { batchSize: 2 });
    await cursor.next();
    const id = cursor.id!;
    expect(id.isZero()).to.equal(false);
    await cursor.close();
    const err = await t.db.command({ getMore: id, collection: "many" }).catch((e) => e);
    expect(err.code).to.equal(43);
  });

  it("takes only an int64 cursor id in getMore and killCursors, and checks the whole command before any cursor", async () => {
    const open = async () => cursorIdOf(await t.db.command({ find: "many", filter: {}, batchSize: 2 }));
    const refused = (command: object) => t.db.command(command).catch((e) => e);
    const id = await open();
    for (const [value, type] of [
      [new Int32(5), "int"],
      [new Double(5), "double"],
      [2.5, "double"],
      ["x", "string"],
    ] as const) {
      const err = await refused({ getMore: value, collection: "many" });
      expect([err.code, err.errmsg], type).to.deep.equal([14, `BSON field 'getMore.getMore' is the wrong type '${type}', expected type 'long'`]);
    }
    // An int64 of any size is an id: one below 2^53 (as a random id is once in 1,024 times) is looked up, not refused.
    const small = await refused({ getMore: Long.fromNumber(1234), collection: "many" });
    expect([small.code, small.errmsg]).to.deep.equal([43, "cursor id 1234 not found"]);
    const noCollection = await refused({ getMore: id });
    expect([noCollection.code, noCollection.errmsg]).to.deep.equal([40414, "BSON field 'getMore.collection' is missing but a required field"]);
    const numberCollection = await refused({ getMore: id, collection: 5 });
    expect([numberCollection.code, numberCollection.errmsg]).to.deep.equal([
      14,
      "BSON field 'getMore.collection' is the wrong type 'int', expected type 'string'",
    ]);
    // The refused commands did not touch the cursor: it still answers its next batch.
    expect((await t.db.command({ getMore: id, collection: "many", batchSize: 1 })).cursor.nextBatch).to.have.length(1);

    const noCursors = await refused({ killCursors: "many" });
    expect([noCursors.code, noCursors.errmsg]).to.deep.equal([40414, "BSON field 'killCursors.cursors' is missing but a required field"]);
    const notArray = await refused({ killCursors: "many", cursors: {} });
    expect([notArray.code, notArray.errmsg]).to.deep.equal([
      14,
      "BSON field 'killCursors.cursors' is the wrong type 'object', expected type 'array'",
    ]);
    const mixed = await refused({ killCursors: "many", cursors: [id, new Int32(100500)] });
    expect([mixed.code, mixed.errmsg]).to.deep.equal([14, "BSON field 'killCursors.cursors.1' is the wrong type 'int', expected type 'long'"]);
    // Nothing was killed: the valid id of the refused command is still open.
    expect((await t.db.command({ getMore: id, collection: "many", batchSize: 1 })).cursor.nextBatch).to.have.length(1);

    const nulls = await t.db.command({ killCursors: "many", cursors: [null] });
    expect([nulls.cursorsKilled, nulls.cursorsNotFound]).to.deep.equal([[], []]);
    const killed = await t.db.command({ killCursors: "many", cursors: [id] }, { promoteLongs: false });
    expect(killed.cursorsKilled.map(String)).to.deep.equal([id.toString()]);
  });

  it("answers find's sizes, awaitData and tailable, and getMore's maxTimeMS as mongod does", async () => {
    const refused = (command: object) => t.db.command(command).catch((e) => e);
    for (const field of ["batchSize", "limit", "skip"]) {
      const err = await refused({ find: "many", [field]: -3 });
      expect([err.code, err.errmsg], field).to.deep.equal([2, `BSON field '${field}' value must be >= 0, actual value '-3'`]);
    }
    for (const value of [0, 3, Long.fromNumber(3), new Double(3), 2.5]) {
      expect((await t.db.command({ find: "many", batchSize: value })).ok, String(value)).to.equal(1);
    }
    // A fractional size is truncated: 2.5 answers a first batch of 2.
    expect((await t.db.command({ find: "many", batchSize: 2.5 })).cursor.firstBatch).to.have.length(2);
    expect((await t.db.command({ find: "many", limit: 3.9 })).cursor.firstBatch).to.have.length(3);

    const awaitOnly = await refused({ find: "many", awaitData: true });
    expect([awaitOnly.code, awaitOnly.errmsg]).to.deep.equal([9, "Cannot set 'awaitData' without also setting 'tailable'"]);
    if (!usingRealMongo) {
      // Not implemented here: said with an error rather than answered as an ordinary cursor that never waits.
      expect((await refused({ find: "many", tailable: true })).code).to.equal(238);
    }

    const id = cursorIdOf(await t.db.command({ find: "many", batchSize: 2 }));
    const waited = await refused({ getMore: id, collection: "many", maxTimeMS: 10 });
    expect([waited.code, waited.errmsg]).to.deep.equal([2, "cannot set maxTimeMS on getMore command for a non-awaitData cursor"]);
    expect((await t.db.command({ getMore: id, collection: "many", batchSize: 1 })).cursor.nextBatch).to.have.length(1);
    await t.db.command({ killCursors: "many", cursors: [id] });
  });
});
