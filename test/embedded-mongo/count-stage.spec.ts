import { expect } from "chai";
import { Int32, MongoServerError, type Document } from "mongodb";
import { countingStage } from "../../src/embedded-mongo/query/count-stage.ts";
import { useTestDatabase } from "./helpers.ts";

// A pipeline ending in a count of its matches (countDocuments, $count) answers what the aggregation would.
describe("embedded-mongo: counting pipelines", function () {
  this.timeout(20000);
  const t = useTestDatabase("count_stage");

  before(async () => {
    await t.db.collection("c").insertMany(Array.from({ length: 30 }, (_, i) => ({ i, even: i % 2 === 0 })));
  });

  const aggregate = (pipeline: Document[]) => t.db.collection("c").aggregate(pipeline, { promoteValues: false }).toArray();

  for (const [name, stage] of [
    ["countDocuments' $group", { $group: { _id: 1, n: { $sum: 1 } } }],
    ["a $group on null", { $group: { _id: null, total: { $sum: 1 } } }],
    ["$count", { $count: "matched" }],
  ] as const) {
    it(`answers ${name} as the whole aggregation does, and nothing for no match`, async () => {
      // A stage after it makes the aggregation run it as any other stage.
      const general = await aggregate([{ $match: { even: true } }, { $skip: 2 }, stage, { $addFields: {} }]);
      const counted = await aggregate([{ $match: { even: true } }, { $skip: 2 }, stage]);
      expect(counted).to.deep.equal(general);
      expect(Object.values(counted[0]!).at(-1)).to.deep.equal(new Int32(13));
      expect(await aggregate([{ $match: { i: 99 } }, stage])).to.deep.equal([]);
    });
  }

  it("counts through the driver's countDocuments, with a filter, skip and limit", async () => {
    const c = t.db.collection("c");
    expect(await c.countDocuments()).to.equal(30);
    expect(await c.countDocuments({ i: { $gte: 10 } }, { skip: 3, limit: 5 })).to.equal(5);
    expect(await c.countDocuments({ i: { $gte: 28 } }, { skip: 1 })).to.equal(1);
  });

  it("leaves any other stage, and invalid names, to the aggregation", async () => {
    expect(countingStage([{ $group: { _id: "$even", n: { $sum: 1 } } }])).to.equal(undefined);
    expect(countingStage([{ $group: { _id: null, n: { $sum: 2 } } }])).to.equal(undefined);
    expect(countingStage([{ $group: { _id: null, "a.b": { $sum: 1 } } }])).to.equal(undefined);
    expect(countingStage([{ $count: "$n" }])).to.equal(undefined);
    expect(countingStage([{ $count: "n" }, { $limit: 1 }])).to.equal(undefined);
    const refused = await aggregate([{ $count: "$n" }]).catch((e) => e);
    expect(refused).to.be.instanceOf(MongoServerError);
  });
});
