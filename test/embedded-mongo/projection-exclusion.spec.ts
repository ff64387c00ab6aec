// Exclusion projections never change the stored documents they read: mingo deletes an excluded field inside an
// embedded document (or inside the documents of an array) from the object it is given, and find, findAndModify,
// aggregate and change streams give it stored documents. Each read below excludes nested fields; the stored
// document must read back unchanged, through the driver, and the answer must lack exactly those fields.
import { expect } from "chai";
import type { Collection, Document } from "mongodb";
import type { Database } from "../../src/store/database.ts";
import { freshDatabase } from "../support/database.ts";

const STORED = {
  _id: "d",
  n: 0,
  a: { b: 1, c: 2 },
  attempts: [
    { e: 1, request: { body: "x" } },
    { e: 2, request: { body: "y" } },
  ],
};

describe("embedded-mongo: exclusion projections leave the stored documents as they were", () => {
  let database: Database;
  let collection: Collection<{ _id: string } & Document>;

  before(async () => {
    database = await freshDatabase();
    collection = database.db.collection("projected");
  });
  beforeEach(async () => {
    await collection.deleteMany({});
    await collection.insertOne(structuredClone(STORED));
  });
  after(async () => {
    await database?.close();
  });

  const withoutNested = { _id: "d", n: 0, a: { c: 2 }, attempts: [{ e: 1 }, { e: 2 }] };
  const reads: [string, () => Promise<unknown>, unknown][] = [
    ["find", () => collection.findOne({ _id: "d" }, { projection: { "attempts.request": 0, "a.b": 0 } }), withoutNested],
    ["find, nested form", () => collection.findOne({ _id: "d" }, { projection: { attempts: { request: 0 }, a: { b: 0 } } }), withoutNested],
    [
      "find with $slice",
      () => collection.findOne({ _id: "d" }, { projection: { "a.b": 0, attempts: { $slice: 1 } } }),
      { ...STORED, a: { c: 2 }, attempts: [STORED.attempts[0]] },
    ],
    [
      "findOneAndUpdate",
      () =>
        collection.findOneAndUpdate({ _id: "d" }, { $inc: { n: 1 } }, { returnDocument: "after", projection: { "attempts.request": 0, "a.b": 0 } }),
      { ...withoutNested, n: 1 },
    ],
    ["find, top-level exclusions", () => collection.findOne({ _id: "d" }, { projection: { _id: 0, n: 0, a: 0 } }), { attempts: STORED.attempts }],
    ["aggregate $project", () => collection.aggregate([{ $project: { "attempts.request": 0, "a.b": 0 } }]).next(), withoutNested],
    ["aggregate $project, top-level exclusions", () => collection.aggregate([{ $project: { _id: 0, n: 0, attempts: 0 } }]).next(), { a: STORED.a }],
    ["aggregate $project, inclusions without _id", () => collection.aggregate([{ $project: { _id: 0, "a.c": 1 } }]).next(), { a: { c: 2 } }],
    [
      "aggregate $project, collated",
      () => collection.aggregate([{ $project: { "a.b": 0 } }], { collation: { locale: "en" } }).next(),
      { ...STORED, a: { c: 2 } },
    ],
    ["aggregate $unset", () => collection.aggregate([{ $unset: ["attempts.request", "a.b"] }]).next(), withoutNested],
  ];

  it("a change stream's $project: its events lack the excluded fields, and the stored document keeps them", async () => {
    const stream = collection.watch([{ $project: { "fullDocument.attempts.request": 0, "fullDocument.a.b": 0 } }]);
    try {
      await stream.tryNext();
      await collection.insertOne({ ...structuredClone(STORED), _id: "e" });
      let change = await stream.tryNext();
      while (change === null) change = await stream.tryNext();
      expect((change as { fullDocument?: unknown }).fullDocument).to.deep.equal({ ...withoutNested, _id: "e" });
      expect(await collection.findOne({ _id: "e" })).to.deep.equal({ ...STORED, _id: "e" });
    } finally {
      await stream.close();
    }
  });

  for (const [name, read, answer] of reads) {
    it(`${name}: answers without the excluded fields, and the stored document keeps them`, async () => {
      expect(await read()).to.deep.equal(answer);
      const stored = await collection.findOne({ _id: "d" });
      expect({ ...stored, n: 0 }).to.deep.equal(STORED);
    });
  }
});
