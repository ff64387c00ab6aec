import { expect } from "chai";
import { MongoBulkWriteError, MongoServerError } from "mongodb";
import { expectLength, useTestDatabase } from "./helpers.ts";

describe("embedded-mongo: indexes and duplicate-key errors", () => {
  const t = useTestDatabase("em_indexes");

  it("reports E11000 on insertOne exactly like mongod", async () => {
    const c = t.db.collection("users");
    await c.createIndex({ email: 1 }, { unique: true });
    await c.insertOne({ email: "a@x.io" });
    const err = await c.insertOne({ email: "a@x.io" }).catch((e) => e);
    expect(err).to.be.instanceOf(MongoServerError);
    expect(err.code).to.equal(11000);
    expect(err.message).to.equal('E11000 duplicate key error collection: em_indexes.users index: email_1 dup key: { email: "a@x.io" }');
    expect(err.keyPattern).to.deep.equal({ email: 1 });
    expect(err.keyValue).to.deep.equal({ email: "a@x.io" });
  });

  it("reports duplicate _id keys", async () => {
    const c = t.db.collection("ids");
    await c.insertOne({ _id: "x" as never });
    const err = await c.insertOne({ _id: "x" as never }).catch((e) => e);
    expect(err.code).to.equal(11000);
    expect(err.message).to.equal('E11000 duplicate key error collection: em_indexes.ids index: _id_ dup key: { _id: "x" }');
  });

  it("ordered insertMany stops at the first duplicate (MongoBulkWriteError)", async () => {
    const c = t.db.collection("ordered");
    const err = await c.insertMany([{ _id: 1 }, { _id: 1 }, { _id: 2 }] as never[]).catch((e) => e);
    expect(err).to.be.instanceOf(MongoBulkWriteError);
    expect(err.code).to.equal(11000);
    expect(err.insertedCount).to.equal(1);
    expect(err.writeErrors).to.have.length(1);
    expect(err.writeErrors[0].index).to.equal(1);
    expect(await c.countDocuments()).to.equal(1);
  });

  it("unordered insertMany continues past duplicates", async () => {
    const c = t.db.collection("unordered");
    const err = await c.insertMany([{ _id: 1 }, { _id: 1 }, { _id: 2 }, { _id: 2 }, { _id: 3 }] as never[], { ordered: false }).catch((e) => e);
    expect(err).to.be.instanceOf(MongoBulkWriteError);
    expect(err.insertedCount).to.equal(3);
    expect(err.writeErrors.map((e: { index: number }) => e.index)).to.deep.equal([1, 3]);
    expect(await c.countDocuments()).to.equal(3);
  });

  it("reports duplicates from updates and from findOneAndUpdate upserts", async () => {
    const c = t.db.collection("upd_dup");
    await c.createIndex({ k: 1 }, { unique: true });
    await c.insertMany([{ k: 1 }, { k: 2 }]);
    const err = await c.updateOne({ k: 2 }, { $set: { k: 1 } }).catch((e) => e);
    expect(err).to.be.instanceOf(MongoServerError);
    expect(err.code).to.equal(11000);
    expect(err.keyValue).to.deep.equal({ k: 1 });
    const fam = await c.findOneAndUpdate({ k: 3 }, { $set: { k: 1 } }, { upsert: true }).catch((e) => e);
    expect(fam).to.be.instanceOf(MongoServerError);
    expect(fam.code).to.equal(11000);
    expect(fam.keyPattern).to.deep.equal({ k: 1 });
    expect(await c.countDocuments()).to.equal(2);
  });

  it("enforces compound unique indexes on the combination", async () => {
    const c = t.db.collection("compound");
    await c.createIndex({ tenant: 1, ref: 1 }, { unique: true });
    await c.insertMany([
      { tenant: "a", ref: 1 },
      { tenant: "b", ref: 1 },
    ]);
    const err = await c.insertOne({ tenant: "a", ref: 1 }).catch((e) => e);
    expect(err.code).to.equal(11000);
    expect(err.message).to.match(/index: tenant_1_ref_1 dup key: \{ tenant: "a", ref: 1 \}$/);
    expect(err.keyValue).to.deep.equal({ tenant: "a", ref: 1 });
  });

  it("unique partial indexes only constrain matching documents", async () => {
    const c = t.db.collection("partial");
    await c.createIndex({ phone: 1 }, { unique: true, partialFilterExpression: { deleted: false } });
    await c.insertMany([
      { phone: "1", deleted: true },
      { phone: "1", deleted: true },
      { phone: "1", deleted: false },
    ]);
    const err = await c.insertOne({ phone: "1", deleted: false }).catch((e) => e);
    expect(err.code).to.equal(11000);
    expect(await c.countDocuments({ phone: "1", deleted: false })).to.equal(1);
  });

  it("sparse unique indexes ignore documents missing the field", async () => {
    const c = t.db.collection("sparse");
    await c.createIndex({ ext: 1 }, { unique: true, sparse: true });
    await c.insertMany([{ a: 1 }, { a: 2 }, { ext: "e1" }]);
    expect((await c.insertOne({ ext: "e1" }).catch((e) => e)).code).to.equal(11000);
    // non-sparse unique: two missing values collide on null
    const d = t.db.collection("nonsparse");
    await d.createIndex({ ext: 1 }, { unique: true });
    await d.insertOne({ a: 1 });
    const err = await d.insertOne({ a: 2 }).catch((e) => e);
    expect(err.code).to.equal(11000);
    expect(err.message).to.match(/dup key: \{ ext: null \}$/);
  });

  it("fails to build a unique index over existing duplicates", async () => {
    const c = t.db.collection("build_dup");
    await c.insertMany([{ v: 1 }, { v: 1 }]);
    const err = await c.createIndex({ v: 1 }, { unique: true }).catch((e) => e);
    expect(err.code).to.equal(11000);
    expect((await c.indexes()).map((i) => i.name)).to.deep.equal(["_id_"]);
  });

  it("lists, conflicts on and drops indexes with mongod's codes", async () => {
    const c = t.db.collection("manage");
    expect(await c.createIndex({ a: 1 })).to.equal("a_1");
    expect(await c.createIndex({ a: 1 })).to.equal("a_1"); // identical: no-op
    await c.createIndex({ b: -1, c: 1 }, { name: "bc" });
    const specs = await c.indexes();
    expect(specs.map((i) => i.name)).to.deep.equal(["_id_", "a_1", "bc"]);
    expectLength(specs, 3);
    expect(specs[2].key).to.deep.equal({ b: -1, c: 1 });
    const sameKeyOtherName = await c.createIndex({ a: 1 }, { name: "other" }).catch((e) => e);
    expect(sameKeyOtherName.code).to.equal(85);
    const sameNameOtherKey = await c.createIndex({ z: 1 }, { name: "a_1" }).catch((e) => e);
    expect(sameNameOtherKey.code).to.equal(86);
    const sameNameOtherOptions = await c.createIndex({ a: 1 }, { unique: true }).catch((e) => e);
    expect(sameNameOtherOptions.code).to.equal(86);
    await c.dropIndex("a_1");
    expect((await c.dropIndex("nope").catch((e) => e)).code).to.equal(27);
    expect((await c.indexes()).map((i) => i.name)).to.deep.equal(["_id_", "bc"]);
    await c.dropIndexes();
    expect((await c.indexes()).map((i) => i.name)).to.deep.equal(["_id_"]);
  });

  it("answers 26 NamespaceNotFound for listIndexes on a missing collection", async () => {
    const err = await t.db
      .collection("does_not_exist")
      .indexes()
      .catch((e) => e);
    expect(err).to.be.instanceOf(MongoServerError);
    expect(err.code).to.equal(26);
  });

  it("explain shows the index a find uses", async () => {
    const c = t.db.collection("explained");
    await c.createIndex({ tenant: 1, at: -1 });
    await c.insertMany(Array.from({ length: 50 }, (_, i) => ({ tenant: `t${i % 5}`, at: i })));
    const plan = await c.find({ tenant: "t1" }).sort({ at: -1 }).limit(3).explain("executionStats");
    // mongod nests stages (LIMIT > FETCH > IXSCAN, or queryPlan under SBE): find the IXSCAN wherever it is.
    const findStage = (node: unknown, stage: string): Record<string, unknown> | undefined => {
      if (!node || typeof node !== "object") return undefined;
      if ((node as { stage?: string }).stage === stage) return node as Record<string, unknown>;
      for (const v of Object.values(node)) {
        const hit = findStage(v, stage);
        if (hit) return hit;
      }
      return undefined;
    };
    const ixscan = findStage(plan.queryPlanner.winningPlan, "IXSCAN")!;
    expect(ixscan).to.not.equal(undefined);
    expect(ixscan.indexName).to.equal("tenant_1_at_-1");
    expect(plan.executionStats.nReturned).to.equal(3);
    expect(plan.executionStats.totalDocsExamined).to.equal(3);
    const scan = await c.find({ other: 1 }).explain("queryPlanner");
    expect(findStage(scan.queryPlanner.winningPlan, "COLLSCAN")).to.not.equal(undefined);
  });

  it("explain shows an index scan for each branch of an $or whose branches can all use an index", async () => {
    // mongod answers such an $or (also one beside other predicates, pushed into each branch) with an OR (or
    // SORT_MERGE) stage over one IXSCAN per branch, and the same documents as a collection scan.
    const c = t.db.collection("explained_or");
    await c.createIndex({ name: 1, lockedAt: 1, nextRunAt: 1 });
    const now = Date.now();
    await c.insertMany(
      Array.from({ length: 60 }, (_, i) => ({
        name: i % 2 ? "a" : "b",
        lockedAt: i < 40 ? new Date(now - (i === 7 ? 3_600_000 : 1000)) : null,
        nextRunAt: new Date(now - 10_000 + i),
      })),
    );
    const filter = { name: "a", $or: [{ lockedAt: null, nextRunAt: { $lte: new Date(now) } }, { lockedAt: { $lte: new Date(now - 60_000) } }] };
    const found = await c.find(filter).sort({ nextRunAt: 1 }).toArray();
    expect(found.map((d) => d.nextRunAt.getTime() - now + 10_000)).to.deep.equal([7, 41, 43, 45, 47, 49, 51, 53, 55, 57, 59]);
    const plan = await c.find(filter).sort({ nextRunAt: 1 }).limit(1).explain("executionStats");
    const scans: Record<string, unknown>[] = [];
    const collect = (node: unknown): void => {
      if (!node || typeof node !== "object") return;
      if ((node as { stage?: string }).stage === "IXSCAN") scans.push(node as Record<string, unknown>);
      for (const v of Object.values(node)) collect(v);
    };
    collect(plan.queryPlanner.winningPlan);
    expect(scans.map((s) => s.indexName)).to.deep.equal(["name_1_lockedAt_1_nextRunAt_1", "name_1_lockedAt_1_nextRunAt_1"]);
    expect(JSON.stringify(plan.queryPlanner.winningPlan)).to.not.include("COLLSCAN");
    expect(plan.executionStats.nReturned).to.equal(1);
    expect(plan.executionStats.totalDocsExamined).to.be.below(5);
  });
});
