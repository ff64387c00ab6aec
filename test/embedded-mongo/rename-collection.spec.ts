import { expect } from "chai";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { MongoClient, type Db, type Document } from "mongodb";
import { startEmbeddedMongo } from "../../src/embedded-mongo/index.ts";
import { cursorIdOf, expectLength, failure, useReplicaSet } from "./helpers.ts";

/** The next `n` events of a raw change stream cursor, by getMore. */
async function nextEvents(db: Db, reply: Document, n: number): Promise<Document[]> {
  const events: Document[] = [...reply.cursor.firstBatch];
  const collection = (reply.cursor.ns as string).slice(db.databaseName.length + 1);
  while (events.length < n && !(reply.cursor.id.isZero?.() ?? reply.cursor.id === 0)) {
    const more = await db.command({ getMore: cursorIdOf(reply), collection, maxTimeMS: 300 });
    events.push(...more.cursor.nextBatch);
    if (more.cursor.id.isZero?.() ?? more.cursor.id === 0) break;
  }
  return events;
}

async function infoOf(db: Db, name: string): Promise<Document> {
  return (await db.listCollections({ name }).toArray())[0] as Document;
}

describe("embedded-mongo: renameCollection", function () {
  this.timeout(20000);
  const rs = useReplicaSet("rename");

  beforeEach(async () => {
    await rs.client.db("rename_other").dropDatabase();
  });

  it("moves documents, indexes (enforced) and options; the old name is gone", async () => {
    await rs.db.createCollection("a", { changeStreamPreAndPostImages: { enabled: true } });
    await rs.db.collection("a").createIndex({ email: 1 }, { unique: true, name: "email_1" });
    await rs.db.collection("a").insertMany([
      { _id: 1, email: "x" },
      { _id: 2, email: "y" },
    ] as never[]);
    const uuidBefore = (await infoOf(rs.db, "a")).info.uuid;
    await rs.db.collection("a").rename("b");
    const names = (await rs.db.listCollections().toArray()).map((c) => c.name);
    expect(names).to.deep.equal(["b"]);
    const info = await infoOf(rs.db, "b");
    expect(info.options).to.deep.equal({ changeStreamPreAndPostImages: { enabled: true } });
    expect(info.info.uuid.toString("hex")).to.equal(uuidBefore.toString("hex"));
    expect(await rs.db.collection("b").find().sort({ _id: 1 }).toArray()).to.deep.equal([
      { _id: 1, email: "x" },
      { _id: 2, email: "y" },
    ]);
    expect((await rs.db.collection("b").listIndexes().toArray()).map((i) => i.name)).to.deep.equal(["_id_", "email_1"]);
    const dup = await failure(rs.db.collection("b").insertOne({ _id: 3, email: "x" } as never));
    expect(dup.code).to.equal(11000);
    expect(dup.message).to.contain("rename.b index: email_1");
    expect(await rs.db.collection("a").countDocuments()).to.equal(0);
  });

  it("answers mongod's errors: admin only, missing source, existing target, itself", async () => {
    await rs.db.collection("a").insertOne({ _id: 1 } as never);
    await rs.db.collection("b").insertOne({ _id: 2 } as never);
    const admin = rs.client.db("admin");
    expect((await failure(rs.db.command({ renameCollection: "rename.a", to: "rename.c" }))).code).to.equal(13);
    expect((await failure(admin.command({ renameCollection: "rename.missing", to: "rename.c" }))).code).to.equal(26);
    expect((await failure(admin.command({ renameCollection: "rename.a", to: "rename.b" }))).code).to.equal(48);
    expect((await failure(admin.command({ renameCollection: "rename.a", to: "rename.a" }))).code).to.equal(20);
    expect((await failure(admin.command({ renameCollection: "rename", to: "rename.c" }))).code).to.equal(73);
    expect((await failure(admin.command({ renameCollection: "rename.a", to: "rename.system.x" }))).code).to.equal(73);
    // Nothing moved.
    expect(await rs.db.collection("a").findOne()).to.deep.equal({ _id: 1 });
    expect(await rs.db.collection("b").findOne()).to.deep.equal({ _id: 2 });
  });

  it("dropTarget replaces the target, and a rename into another database works", async () => {
    await rs.db.collection("a").insertOne({ _id: 1, from: "a" } as never);
    await rs.db.collection("b").insertOne({ _id: 1, from: "b" } as never);
    await rs.db.collection("b").createIndex({ from: 1 });
    await rs.db.collection("a").rename("b", { dropTarget: true });
    expect(await rs.db.collection("b").find().toArray()).to.deep.equal([{ _id: 1, from: "a" }]);
    expect((await rs.db.collection("b").listIndexes().toArray()).map((i) => i.name)).to.deep.equal(["_id_"]);
    await rs.client.db("admin").command({ renameCollection: "rename.b", to: "rename_other.moved" });
    expect(await rs.client.db("rename_other").collection("moved").find().toArray()).to.deep.equal([{ _id: 1, from: "a" }]);
    expect(await rs.db.listCollections().toArray()).to.deep.equal([]);
  });

  it("streams see a rename event with `to`; a collection stream (source or target) is invalidated after it", async () => {
    await rs.db.collection("src").insertOne({ _id: 1 } as never);
    await rs.db.collection("dst").insertOne({ _id: 2 } as never);
    const onSource = await rs.db.command({ aggregate: "src", pipeline: [{ $changeStream: {} }], cursor: {} });
    const onTarget = await rs.db.command({ aggregate: "dst", pipeline: [{ $changeStream: {} }], cursor: {} });
    const onDb = await rs.db.command({ aggregate: 1, pipeline: [{ $changeStream: {} }], cursor: {} });
    await rs.db.collection("src").rename("dst", { dropTarget: true });
    await rs.db.collection("dst").insertOne({ _id: 3 } as never);

    const source = await nextEvents(rs.db, onSource, 2);
    expect(source.map((e) => e.operationType)).to.deep.equal(["rename", "invalidate"]);
    expectLength(source, 2);
    expect(source[0].ns).to.deep.equal({ db: "rename", coll: "src" });
    expect(source[0].to).to.deep.equal({ db: "rename", coll: "dst" });
    expect(source[0]).to.not.have.property("operationDescription");
    const target = await nextEvents(rs.db, onTarget, 2);
    expect(target.map((e) => e.operationType)).to.deep.equal(["rename", "invalidate"]);
    const all = await nextEvents(rs.db, onDb, 2);
    expect(all.map((e) => e.operationType)).to.deep.equal(["rename", "insert"]);
    expectLength(all, 2);
    expect(all[1].ns).to.deep.equal({ db: "rename", coll: "dst" });
  });
});

describe("embedded-mongo: renameCollection in durable mode", function () {
  this.timeout(30000);
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), "embedded-mongo-rename-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  async function withServer<T>(options: { snapshotAfterJournalBytes?: number }, run: (db: Db, client: MongoClient) => Promise<T>): Promise<T> {
    const mongo = await startEmbeddedMongo({ dbPath: dir, replSet: "rs0", ...options });
    const client = new MongoClient(mongo.uri);
    try {
      return await run(client.db("durable"), client);
    } finally {
      await client.close();
      await mongo.stop();
    }
  }

  it("a restart replays the rename from the journal: data, indexes, UUID under the new name; the old name stays free", async () => {
    const { uuid, token } = await withServer({}, async (db) => {
      await db.collection("a").createIndex({ k: 1 }, { unique: true });
      await db.collection("a").insertMany([
        { _id: 1, k: 1 },
        { _id: 2, k: 2 },
      ] as never[]);
      await db.collection("t").insertOne({ _id: 9, old: true } as never);
      const stream = await db.command({ aggregate: "a", pipeline: [{ $changeStream: {} }], cursor: {} });
      await db.collection("a").rename("t", { dropTarget: true });
      // Written after the rename: the new name, and a new collection under the old name.
      await db.collection("t").insertOne({ _id: 3, k: 3 } as never);
      await db.collection("a").insertOne({ _id: "fresh" } as never);
      const uuid = (await infoOf(db, "t")).info.uuid.toString("hex") as string;
      return { uuid, token: stream.cursor.postBatchResumeToken };
    });
    await withServer({}, async (db) => {
      expect(await db.collection("t").find().sort({ _id: 1 }).toArray()).to.deep.equal([
        { _id: 1, k: 1 },
        { _id: 2, k: 2 },
        { _id: 3, k: 3 },
      ]);
      expect(await db.collection("a").find().toArray()).to.deep.equal([{ _id: "fresh" }]);
      const info = await infoOf(db, "t");
      expect(info.info.uuid.toString("hex")).to.equal(uuid);
      expect((await db.collection("t").listIndexes().toArray()).map((i) => i.name)).to.deep.equal(["_id_", "k_1"]);
      expect((await failure(db.collection("t").insertOne({ _id: 4, k: 1 } as never))).code).to.equal(11000);
      // The stream on the old name resumes across the restart to the rename and its invalidate.
      const resumed = await db.command({ aggregate: "a", pipeline: [{ $changeStream: { resumeAfter: token } }], cursor: {} });
      const events = await nextEvents(db, resumed, 2);
      expect(events.map((e) => e.operationType)).to.deep.equal(["rename", "invalidate"]);
      expectLength(events, 2);
      expect(events[0].to).to.deep.equal({ db: "durable", coll: "t" });
    });
  });

  it("snapshots taken around renames restart to the same state", async () => {
    await withServer({ snapshotAfterJournalBytes: 4_000 }, async (db) => {
      const filler = "x".repeat(500);
      for (let i = 0; i < 20; i++) await db.collection("a").insertOne({ _id: i, filler } as never);
      await db.collection("a").rename("b");
      for (let i = 0; i < 20; i++) await db.collection("a").insertOne({ _id: i, second: true, filler } as never);
      await db.collection("b").updateOne({ _id: 0 } as never, { $set: { moved: true } });
      await db.collection("a").rename("c");
      await db.collection("c").rename("b", { dropTarget: true });
      await db.collection("b").insertOne({ _id: "last" } as never);
    });
    expect(existsSync(path.join(dir, "snapshot.bson"))).to.equal(true);
    await withServer({}, async (db) => {
      expect((await db.listCollections().toArray()).map((c) => c.name)).to.deep.equal(["b"]);
      expect(await db.collection("b").countDocuments({ second: true })).to.equal(20);
      expect(await db.collection("b").countDocuments()).to.equal(21);
      expect(await db.collection("b").findOne({ _id: 0 } as never)).to.not.have.property("moved");
    });
  });
});
