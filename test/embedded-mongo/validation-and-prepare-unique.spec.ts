import { expect } from "chai";
import type { Document } from "mongodb";
import { expectLength, failure, useReplicaSet } from "./helpers.ts";

describe("embedded-mongo: validators, prepareUnique, $collStats", function () {
  this.timeout(20000);
  const rs = useReplicaSet("validation");

  it("a validator refuses failing inserts and updates with 121 and mongod's errInfo; bypassDocumentValidation skips it", async () => {
    await rs.db.createCollection("v", { validator: { x: { $type: "string" } } });
    const c = rs.db.collection("v");
    await c.insertOne({ _id: 1, x: "ok" } as never);
    const insert = await failure(c.insertOne({ _id: 2, x: 5 } as never));
    expect(insert.code).to.equal(121);
    expect(insert.errInfo).to.deep.equal({
      failingDocumentId: 2,
      details: {
        operatorName: "$type",
        specifiedAs: { x: { $type: "string" } },
        reason: "type did not match",
        consideredValue: 5,
        consideredType: "int",
      },
    });
    const missing = await failure(c.insertOne({ _id: 3 } as never));
    expect(missing.errInfo.details).to.deep.equal({ operatorName: "$type", specifiedAs: { x: { $type: "string" } }, reason: "field was missing" });
    const update = await failure(c.findOneAndUpdate({ _id: 1 } as never, { $set: { x: 1 } }));
    expect(update.code).to.equal(121);
    expect(update.errorResponse.errInfo.failingDocumentId).to.equal(1);
    expect((await failure(c.updateOne({ _id: 1 } as never, { $set: { x: 1 } }))).code).to.equal(121);
    await c.insertOne({ _id: 4, x: 4 } as never, { bypassDocumentValidation: true });
    await c.updateOne({ _id: 1 } as never, { $set: { x: 1 } }, { bypassDocumentValidation: true });
    expect(await c.find().sort({ _id: 1 }).toArray()).to.deep.equal([
      { _id: 1, x: 1 },
      { _id: 4, x: 4 },
    ]);
  });

  it("several clauses are an $and in errInfo; collMod sets validator, level and action", async () => {
    await rs.db.collection("v").insertOne({ _id: 1, a: 1 } as never);
    await rs.db.command({ collMod: "v", validator: { a: { $gte: 10 }, b: { $exists: true } } });
    const err = await failure(rs.db.collection("v").insertOne({ _id: 2, a: 3, b: 1 } as never));
    expect(err.errInfo.details).to.deep.equal({
      operatorName: "$and",
      clausesNotSatisfied: [
        { index: 0, details: { operatorName: "$gte", specifiedAs: { a: { $gte: 10 } }, reason: "comparison failed", consideredValue: 3 } },
      ],
    });
    // moderate: documents already invalid may still be updated; valid ones must stay valid.
    await rs.db.command({ collMod: "v", validationLevel: "moderate" });
    await rs.db.collection("v").updateOne({ _id: 1 } as never, { $set: { c: 1 } });
    await rs.db.collection("v").insertOne({ _id: 3, a: 20, b: 1 } as never);
    expect((await failure(rs.db.collection("v").updateOne({ _id: 3 } as never, { $set: { a: 1 } }))).code).to.equal(121);
    // warn: accepted (mongod only logs); off: not checked.
    await rs.db.command({ collMod: "v", validationAction: "warn" });
    await rs.db.collection("v").insertOne({ _id: 4 } as never);
    await rs.db.command({ collMod: "v", validationAction: "error", validationLevel: "off" });
    await rs.db.collection("v").insertOne({ _id: 5 } as never);
    const info = (await rs.db.listCollections({ name: "v" }).toArray())[0] as Document;
    expect(info.options).to.deep.include({ validationLevel: "off", validationAction: "error" });
  });

  it("refuses what it does not implement: $jsonSchema validators, $out into a validated collection", async () => {
    expect((await failure(rs.db.createCollection("j", { validator: { $jsonSchema: { required: ["a"] } } }))).code).to.equal(72);
    expect((await failure(rs.db.createCollection("j", { validationLevel: "sometimes" } as never))).code).to.equal(2);
    await rs.db.createCollection("v", { validator: { a: { $exists: true } } });
    await rs.db.collection("src").insertOne({ a: 1 });
    expect(
      (
        await failure(
          rs.db
            .collection("src")
            .aggregate([{ $out: "v" }])
            .toArray(),
        )
      ).code,
    ).to.equal(72);
  });

  it("prepareUnique refuses new duplicates; unique: true reports the existing ones (359), then converts once they are gone", async () => {
    const c = rs.db.collection("p");
    await c.insertMany([
      { _id: 1, x: 1 },
      { _id: 2, x: 1 },
      { _id: 3, x: 2 },
    ] as never[]);
    await c.createIndex({ x: 1 });
    expect((await failure(rs.db.command({ collMod: "p", index: { keyPattern: { x: 1 }, unique: true } }))).code).to.equal(72);
    const prepared = await rs.db.command({ collMod: "p", index: { keyPattern: { x: 1 }, prepareUnique: true } });
    expect(prepared).to.include({ prepareUnique_old: false, prepareUnique_new: true });
    expect((await c.listIndexes().toArray())[1]).to.include({ prepareUnique: true });
    expect((await failure(c.insertOne({ _id: 4, x: 2 } as never))).code).to.equal(11000);
    expect((await failure(c.updateOne({ _id: 3 } as never, { $set: { x: 1 } }))).code).to.equal(11000);
    await c.updateOne({ _id: 1 } as never, { $set: { y: 1 } }); // keeps its (duplicated) key: allowed
    const violations = await failure(rs.db.command({ collMod: "p", index: { keyPattern: { x: 1 }, unique: true } }));
    expect(violations.code).to.equal(359);
    expect(violations.errorResponse.violations).to.deep.equal([{ ids: [1, 2] }]);
    const dryRun = await failure(rs.db.command({ collMod: "p", index: { keyPattern: { x: 1 }, unique: true }, dryRun: true }));
    expect(dryRun.code).to.equal(359);
    await c.deleteOne({ _id: 2 } as never);
    expect(await rs.db.command({ collMod: "p", index: { keyPattern: { x: 1 }, unique: true } })).to.include({ unique_new: true });
    const index = (await c.listIndexes().toArray())[1];
    expect(index).to.include({ unique: true });
    expect(index).to.not.have.property("prepareUnique");
    expect((await failure(c.insertOne({ _id: 5, x: 2 } as never))).code).to.equal(11000);
  });

  it("$collStats gives count and storageStats (capped options included) and refuses the rest", async () => {
    await rs.db.createCollection("c", { capped: true, size: 4096 });
    await rs.db.collection("c").insertMany([{ _id: 1, x: 11 }, { _id: 2 }] as never[]);
    const results = await rs.db
      .collection("c")
      .aggregate([{ $collStats: { storageStats: {}, count: {} } }])
      .toArray();
    expectLength(results, 1);
    const [stats] = results;
    expect(stats.ns).to.equal("validation.c");
    expect(stats.count).to.equal(2);
    expect(stats.storageStats).to.include({ count: 2, capped: true, maxSize: 4096, nindexes: 1, scaleFactor: 1 });
    expect(stats.storageStats.size).to.be.greaterThan(0);
    const projected = await rs.db
      .collection("c")
      .aggregate([{ $collStats: { storageStats: {} } }, { $project: { _id: 0, capped: "$storageStats.capped", maxSize: "$storageStats.maxSize" } }])
      .toArray();
    expect(projected).to.deep.equal([{ capped: true, maxSize: 4096 }]);
    expect(
      (
        await failure(
          rs.db
            .collection("c")
            .aggregate([{ $collStats: { latencyStats: {} } }])
            .toArray(),
        )
      ).code,
    ).to.equal(238);
    expect(
      (
        await failure(
          rs.db
            .collection("c")
            .aggregate([{ $match: {} }, { $collStats: {} }])
            .toArray(),
        )
      ).code,
    ).to.be.oneOf([40602, 238]);
    expect(
      (
        await failure(
          rs.db
            .collection("none")
            .aggregate([{ $collStats: { count: {} } }])
            .toArray(),
        )
      ).code,
    ).to.equal(26);
  });

  it("$out and $merge are refused under readConcern linearizable", async () => {
    await rs.db.collection("s").insertOne({ _id: 1 } as never);
    const coll = rs.db.collection("s", { readConcern: { level: "linearizable" } });
    expect((await failure(coll.aggregate([{ $out: "t" }]).toArray())).code).to.equal(72);
    expect((await failure(coll.aggregate([{ $merge: { into: "t" } }]).toArray())).code).to.equal(72);
    expect(await coll.aggregate([{ $match: {} }]).toArray()).to.deep.equal([{ _id: 1 }]);
  });
});
