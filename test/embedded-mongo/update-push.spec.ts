// $push as mongod applies it: values and plain $each appended (copies, the stored document untouched until the
// write), modifiers ($slice, $position) still applied, and a push onto a field that is not an array refused.
// Sent as raw update commands: the driver's typings do not describe every $push form.
import { expect } from "chai";
import type { Document } from "mongodb";
import { useTestDatabase } from "./helpers.ts";

describe("embedded-mongo: $push", () => {
  const t = useTestDatabase("em_update_push");
  const update = (collection: string, u: Document) => t.db.command({ update: collection, updates: [{ q: { _id: 1 }, u }] });

  it("appends values and $each lists, creating missing arrays and nested paths, with other operators in one update", async () => {
    const c = t.db.collection("push");
    await c.insertOne({ _id: 1 as never, a: [1], n: 5, o: { x: 1 } });
    const pushed = await update("push", { $push: { a: 2, b: { $each: [3, 4] }, "o.y": { k: 1 } }, $inc: { n: 1 } });
    expect(pushed).to.include({ n: 1, nModified: 1 });
    expect(await c.findOne({})).to.deep.equal({ _id: 1, a: [1, 2], n: 6, o: { x: 1, y: [{ k: 1 }] }, b: [3, 4] });
    // An empty $each on an existing array changes nothing; a document without $ fields is pushed whole.
    expect(await update("push", { $push: { a: { $each: [] } } })).to.include({ n: 1, nModified: 0 });
    await update("push", { $push: { a: { each: 1 } } });
    expect((await c.findOne({}))!.a).to.deep.equal([1, 2, { each: 1 }]);
  });

  it("applies $slice and $position with $each", async () => {
    const c = t.db.collection("modifiers");
    await c.insertOne({ _id: 1 as never, a: [1, 2, 3] });
    await update("modifiers", { $push: { a: { $each: [9], $slice: -2 } } });
    expect((await c.findOne({}))!.a).to.deep.equal([3, 9]);
    await update("modifiers", { $push: { a: { $each: [0], $position: 0 } } });
    expect((await c.findOne({}))!.a).to.deep.equal([0, 3, 9]);
    // $slice alone with $each: the first n, the last -n, none; on a missing field too; an empty $each still slices.
    await update("modifiers", { $push: { a: { $each: [7, 8], $slice: 3 }, b: { $slice: -2, $each: [1, 2, 3] }, c: { $each: [1], $slice: 0 } } });
    expect(await c.findOne({})).to.deep.equal({ _id: 1, a: [0, 3, 9], b: [2, 3], c: [] });
    expect(await update("modifiers", { $push: { a: { $each: [], $slice: -1 } } })).to.include({ n: 1, nModified: 1 });
    expect(await update("modifiers", { $push: { a: { $each: [], $slice: 5 } } })).to.include({ n: 1, nModified: 0 });
    expect((await c.findOne({}))!.a).to.deep.equal([9]);
  });

  it("refuses a push onto a field that is not an array with BadValue, changing nothing", async () => {
    const c = t.db.collection("refused");
    await c.insertOne({ _id: 1 as never, n: 5, s: "x" });
    const answer = await update("refused", { $push: { n: 1 } });
    expect(answer.nModified).to.equal(0);
    expect(answer.writeErrors).to.have.length(1);
    expect(answer.writeErrors[0]).to.include({ code: 2, errmsg: "The field 'n' must be an array but is of type int in document {_id: 1}" });
    expect(await c.findOne({})).to.deep.equal({ _id: 1, n: 5, s: "x" });
  });
});
