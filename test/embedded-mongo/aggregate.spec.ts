import { expect } from "chai";
import { ObjectId } from "mongodb";
import { useTestDatabase } from "./helpers.ts";

describe("embedded-mongo: aggregation", () => {
  const t = useTestDatabase("em_aggregate");

  before(async () => {
    await t.db.collection("payments").insertMany(
      Array.from({ length: 60 }, (_, i) => ({
        _id: i,
        status: ["paid", "failed", "pending"][i % 3],
        amount: i * 10,
        user: `u${i % 4}`,
      })) as never[],
    );
  });

  it("runs $match, $sort, $skip, $limit and $project", async () => {
    const docs = await t.db
      .collection("payments")
      .aggregate([
        { $match: { status: "paid" } },
        { $sort: { amount: -1 } },
        { $skip: 1 },
        { $limit: 3 },
        { $project: { _id: 0, amount: 1, cents: { $multiply: ["$amount", 100] } } },
      ])
      .toArray();
    expect(docs).to.deep.equal([
      { amount: 540, cents: 54000 },
      { amount: 510, cents: 51000 },
      { amount: 480, cents: 48000 },
    ]);
  });

  it("runs $group with accumulators and $count", async () => {
    const groups = await t.db
      .collection("payments")
      .aggregate([{ $group: { _id: "$status", n: { $sum: 1 }, total: { $sum: "$amount" }, max: { $max: "$amount" } } }, { $sort: { _id: 1 } }])
      .toArray();
    expect(groups).to.deep.equal([
      { _id: "failed", n: 20, total: 5900, max: 580 },
      { _id: "paid", n: 20, total: 5700, max: 570 },
      { _id: "pending", n: 20, total: 6100, max: 590 },
    ]);
    const counted = await t.db
      .collection("payments")
      .aggregate([{ $match: { user: "u1" } }, { $count: "n" }])
      .toArray();
    expect(counted).to.deep.equal([{ n: 15 }]);
  });

  it("returns large results through several batches", async () => {
    const docs = await t.db
      .collection("payments")
      .aggregate([{ $sort: { _id: 1 } }], { batchSize: 7 })
      .toArray();
    expect(docs.map((d) => d._id)).to.deep.equal(Array.from({ length: 60 }, (_, i) => i));
  });

  it("sorts ObjectIds and dates in BSON order inside pipelines", async () => {
    const c = t.db.collection("ordered_ids");
    const ids: [ObjectId, ObjectId, ObjectId] = [
      new ObjectId("000000000000000000000002"),
      new ObjectId("000000000000000000000010"),
      new ObjectId("0000000000000000000000ff"),
    ];
    await c.insertMany([{ _id: ids[2] }, { _id: ids[0] }, { _id: ids[1] }]);
    const docs = await c.aggregate([{ $match: {} }, { $addFields: { x: 1 } }, { $sort: { _id: 1 } }]).toArray();
    expect(docs.map((d) => d._id.toHexString())).to.deep.equal(ids.map((i) => i.toHexString()));
    // $addFields must not leak into the stored documents
    expect(await c.findOne({ _id: ids[0] })).to.deep.equal({ _id: ids[0] });
  });

  it("joins another collection of the database with $lookup", async () => {
    await t.db.collection("lk_users").insertMany([
      { _id: "u1", name: "Ada" },
      { _id: "u2", name: "Bob" },
    ] as never[]);
    await t.db.collection("lk_orders").insertMany([
      { _id: 1, user: "u1" },
      { _id: 2, user: "u2" },
      { _id: 3, user: "u1" },
    ] as never[]);
    const docs = await t.db
      .collection("lk_orders")
      .aggregate([
        { $match: { user: "u1" } },
        { $lookup: { from: "lk_users", localField: "user", foreignField: "_id", as: "owner" } },
        { $sort: { _id: 1 } },
      ])
      .toArray();
    expect(docs).to.deep.equal([
      { _id: 1, user: "u1", owner: [{ _id: "u1", name: "Ada" }] },
      { _id: 3, user: "u1", owner: [{ _id: "u1", name: "Ada" }] },
    ]);
  });
});
