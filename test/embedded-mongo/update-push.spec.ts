// $push as mongod applies it: values and plain $each appended (copies, the stored document untouched until the
// write), modifiers ($slice, $position, $sort) still applied, and a push onto a field that is not an array refused.
import { expect } from "chai";
import { MongoServerError } from "mongodb";
import { useTestDatabase } from "./helpers.ts";

describe("embedded-mongo: $push", () => {
  const t = useTestDatabase("em_update_push");

  it("appends values and $each lists, creating missing arrays and nested paths, with other operators in one update", async () => {
    const c = t.db.collection<any>("push");
    await c.insertOne({ _id: 1, a: [1], n: 5, o: { x: 1 } });
    const pushed = await c.updateOne({ _id: 1 }, { $push: { a: 2, b: { $each: [3, 4] }, "o.y": { k: 1 } }, $inc: { n: 1 } });
    expect(pushed.modifiedCount).to.equal(1);
    expect(await c.findOne({ _id: 1 })).to.deep.equal({ _id: 1, a: [1, 2], n: 6, o: { x: 1, y: [{ k: 1 }] }, b: [3, 4] });
    // A document with a $-free field pushed whole; an empty $each on an existing array changes nothing.
    expect((await c.updateOne({ _id: 1 }, { $push: { a: { $each: [] } } })).modifiedCount).to.equal(0);
    await c.updateOne({ _id: 1 }, { $push: { a: { each: 1 } } });
    expect((await c.findOne({ _id: 1 }))!.a).to.deep.equal([1, 2, { each: 1 }]);
  });

  it("applies $slice and $position with $each", async () => {
    const c = t.db.collection<any>("modifiers");
    await c.insertOne({ _id: 1, a: [1, 2, 3] });
    await c.updateOne({ _id: 1 }, { $push: { a: { $each: [9], $slice: -2 } } });
    expect((await c.findOne({ _id: 1 }))!.a).to.deep.equal([3, 9]);
    await c.updateOne({ _id: 1 }, { $push: { a: { $each: [0], $position: 0 } } });
    expect((await c.findOne({ _id: 1 }))!.a).to.deep.equal([0, 3, 9]);
  });

  it("refuses a push onto a field that is not an array with BadValue, changing nothing", async () => {
    const c = t.db.collection<any>("refused");
    await c.insertOne({ _id: 1, n: 5, s: "x" });
    const error = (await c.updateOne({ _id: 1 }, { $push: { n: 1 } }).catch((e: unknown) => e)) as MongoServerError;
    expect(error).to.be.instanceOf(MongoServerError);
    expect(error.code).to.equal(2);
    expect(error.message).to.equal("The field 'n' must be an array but is of type int in document {_id: 1}");
    expect(await c.findOne({ _id: 1 })).to.deep.equal({ _id: 1, n: 5, s: "x" });
  });
});
