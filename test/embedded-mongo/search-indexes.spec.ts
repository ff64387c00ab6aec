import { expect } from "chai";
import { MongoServerError } from "mongodb";
import { useReplicaSet } from "./helpers.ts";

// What a mongod 7.0 without Atlas Search answers to the search index commands and the $listSearchIndexes stage, and
// to the 8.0-only bulkWrite command (on an embedded server of its own, whatever MONGODB_URI says).
describe("embedded-mongo: commands a non-Atlas mongod 7.0 refuses", () => {
  const rs = useReplicaSet("search_indexes", { client: { serverSelectionTimeoutMS: 5000 }, dropBeforeEach: false });

  before(async () => {
    await rs.db.collection("c").insertOne({ x: 1 });
  });

  async function failure(run: () => Promise<unknown>): Promise<MongoServerError> {
    const err = await run().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err, "expected a server error").to.be.instanceOf(MongoServerError);
    return err as MongoServerError;
  }

  function expectNotAtlas(err: MongoServerError): void {
    expect(err.code).to.equal(115);
    expect(err.codeName).to.equal("CommandNotSupported");
    expect(err.message).to.equal("Search index commands are only supported with Atlas.");
  }

  it("refuses createSearchIndexes, updateSearchIndex and dropSearchIndex with 115 CommandNotSupported", async () => {
    const c = rs.db.collection("c");
    expectNotAtlas(await failure(() => c.createSearchIndex({ name: "s", definition: { mappings: { dynamic: true } } })));
    expectNotAtlas(await failure(() => c.createSearchIndexes([])));
    expectNotAtlas(await failure(() => c.updateSearchIndex("s", { mappings: { dynamic: false } })));
    expectNotAtlas(await failure(() => c.dropSearchIndex("s")));
  });

  it("refuses them the same way on a collection that does not exist", async () => {
    expectNotAtlas(await failure(() => rs.db.command({ createSearchIndexes: "missing", indexes: [] })));
    expectNotAtlas(await failure(() => rs.db.command({ dropSearchIndex: "missing", name: "s" })));
  });

  it("refuses the listSearchIndexes command with 115 CommandNotSupported", async () => {
    expectNotAtlas(await failure(() => rs.db.command({ listSearchIndexes: "c" })));
  });

  it("parses the command first: a missing indexes array or a non-string collection name are parse errors", async () => {
    const missing = await failure(() => rs.db.command({ createSearchIndexes: "c" }));
    expect(missing.code).to.equal(40414);
    expect(missing.message).to.equal("BSON field 'createSearchIndexes.indexes' is missing but a required field");
    const wrongType = await failure(() => rs.db.command({ createSearchIndexes: "c", indexes: {} }));
    expect(wrongType.code).to.equal(14);
    const badName = await failure(() => rs.db.command({ dropSearchIndex: 1, name: "s" }));
    expect(badName.code).to.equal(73);
  });

  it("refuses the $listSearchIndexes stage with 6047401", async () => {
    const err = await failure(() => rs.db.collection("c").listSearchIndexes("s").toArray());
    expect(err.code).to.equal(6047401);
    expect(err.codeName).to.equal("Location6047401");
    expect(err.message).to.equal("$listSearchIndexes stage is only allowed on MongoDB Atlas");
    const later = await failure(() =>
      rs.db
        .collection("c")
        .aggregate([{ $match: {} }, { $listSearchIndexes: {} }])
        .toArray(),
    );
    expect(later.code).to.equal(6047401);
  });

  it("does not know the bulkWrite command (mongod 8.0): 59 CommandNotFound", async () => {
    const err = await failure(() =>
      rs.client.db("admin").command({ bulkWrite: 1, ops: [{ insert: 0, document: { x: 1 } }], nsInfo: [{ ns: "search_indexes.c" }] }),
    );
    expect(err.code).to.equal(59);
    expect(err.codeName).to.equal("CommandNotFound");
    expect(err.message).to.equal("no such command: 'bulkWrite'");
  });
});
