import { expect } from "chai";
import { appendFileSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { MongoClient } from "mongodb";
import { startCli } from "./cli-process.ts";
import { cursorIdOf } from "./helpers.ts";
import { startEmbeddedMongo } from "../../src/embedded-mongo/index.ts";

function journals(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.startsWith("journal."))
    .sort();
}

describe("embedded-mongo: durable mode (dbPath)", function () {
  this.timeout(30000);
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), "embedded-mongo-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps documents, indexes and collection options across a restart", async () => {
    let mongo = await startEmbeddedMongo({ dbPath: dir });
    let client = new MongoClient(mongo.uri);
    const db = () => client.db("durable");
    await db().createCollection("capped_like", { validator: { a: { $exists: true } } });
    await db().collection("users").createIndex({ email: 1 }, { unique: true, name: "email_unique" });
    await db()
      .collection("users")
      .insertMany([
        { _id: 1, email: "a@x" },
        { _id: 2, email: "b@x" },
        { _id: 3, email: "c@x" },
      ] as never[]);
    await db()
      .collection("users")
      .updateOne({ _id: 2 as never }, { $set: { name: "Bee" } });
    await db()
      .collection("users")
      .deleteOne({ _id: 3 as never });
    await db().collection("gone").insertOne({ x: 1 });
    await db().collection("gone").drop();
    await client.close();
    await mongo.stop();

    mongo = await startEmbeddedMongo({ dbPath: dir });
    client = new MongoClient(mongo.uri);
    try {
      expect(await db().collection("users").find().sort({ _id: 1 }).toArray()).to.deep.equal([
        { _id: 1, email: "a@x" },
        { _id: 2, email: "b@x", name: "Bee" },
      ]);
      const indexes = await db().collection("users").listIndexes().toArray();
      expect(indexes.map((i) => i.name)).to.deep.equal(["_id_", "email_unique"]);
      expect(indexes[1].unique).to.equal(true);
      const dup = await db()
        .collection("users")
        .insertOne({ email: "a@x" })
        .catch((e) => e);
      expect(dup.code).to.equal(11000);
      const infos = await db().listCollections().toArray();
      expect(infos.map((c) => c.name).sort()).to.deep.equal(["capped_like", "users"]);
      expect((infos.find((c) => c.name === "capped_like") as { options?: unknown } | undefined)?.options).to.deep.equal({
        validator: { a: { $exists: true } },
      });
    } finally {
      await client.close();
      await mongo.stop();
    }
  });

  it("keeps collMod changes (index options, pre- and post-images) across a restart", async () => {
    let mongo = await startEmbeddedMongo({ dbPath: dir });
    let client = new MongoClient(mongo.uri);
    const db = () => client.db("durable");
    await db().collection("modded").createIndex({ at: 1 }, { expireAfterSeconds: 60, name: "ttl" });
    await db().command({
      collMod: "modded",
      index: { name: "ttl", expireAfterSeconds: 120, hidden: true },
      changeStreamPreAndPostImages: { enabled: true },
    });
    await client.close();
    await mongo.stop();
    mongo = await startEmbeddedMongo({ dbPath: dir });
    client = new MongoClient(mongo.uri);
    try {
      const ttl = (await db().collection("modded").listIndexes().toArray()).find((i) => i.name === "ttl");
      expect(ttl).to.include({ expireAfterSeconds: 120, hidden: true });
      const [info] = await db().listCollections({ name: "modded" }).toArray();
      expect((info as { options?: unknown }).options).to.deep.equal({ changeStreamPreAndPostImages: { enabled: true } });
    } finally {
      await client.close();
      await mongo.stop();
    }
  });

  it("compacts the journal into a snapshot and restarts from snapshot + journal", async () => {
    let mongo = await startEmbeddedMongo({ dbPath: dir, snapshotAfterJournalBytes: 20_000 });
    let client = new MongoClient(mongo.uri);
    const coll = () => client.db("durable").collection("many");
    await coll().createIndex({ n: 1 });
    for (let i = 0; i < 10; i++) await coll().insertMany(Array.from({ length: 50 }, (_, j) => ({ n: i * 50 + j, pad: "x".repeat(50) })));
    await coll().deleteMany({ n: { $lt: 100 } });
    await new Promise((r) => setTimeout(r, 300)); // let the last snapshot finish
    expect(readdirSync(dir)).to.include("snapshot.bson");
    expect(journals(dir).length).to.be.at.most(2); // older files deleted once covered by a snapshot
    await client.close();
    await mongo.stop();

    mongo = await startEmbeddedMongo({ dbPath: dir });
    client = new MongoClient(mongo.uri);
    try {
      expect(await coll().countDocuments()).to.equal(400);
      expect(await coll().findOne({ n: 499 }, { projection: { _id: 0, n: 1 } })).to.deep.equal({ n: 499 });
      expect((await coll().listIndexes().toArray()).map((i) => i.name)).to.deep.equal(["_id_", "n_1"]);
    } finally {
      await client.close();
      await mongo.stop();
    }
  });

  it("ignores a torn record at the end of the journal", async () => {
    let mongo = await startEmbeddedMongo({ dbPath: dir });
    let client = new MongoClient(mongo.uri);
    await client
      .db("durable")
      .collection("t")
      .insertMany([{ _id: 1 }, { _id: 2 }] as never[]);
    await client.close();
    await mongo.stop();
    const journal = path.join(dir, journals(dir).at(-1)!);
    const size = statSync(journal).size;
    // Half a record: a length announcing more bytes than follow, then garbage.
    appendFileSync(journal, Buffer.from([200, 0, 0, 0, 1, 2, 3, 4, 1, 9, 9, 9]));
    mongo = await startEmbeddedMongo({ dbPath: dir });
    client = new MongoClient(mongo.uri);
    try {
      expect(statSync(journal).size).to.equal(size); // cut back to the last whole record
      expect(await client.db("durable").collection("t").countDocuments()).to.equal(2);
      await client
        .db("durable")
        .collection("t")
        .insertOne({ _id: 3 } as never);
    } finally {
      await client.close();
      await mongo.stop();
    }
    mongo = await startEmbeddedMongo({ dbPath: dir });
    client = new MongoClient(mongo.uri);
    try {
      expect(await client.db("durable").collection("t").countDocuments()).to.equal(3);
    } finally {
      await client.close();
      await mongo.stop();
    }
  });

  it("ignores a torn tail in a journal file retired just before the crash (its successor still empty)", async () => {
    let mongo = await startEmbeddedMongo({ dbPath: dir });
    let client = new MongoClient(mongo.uri);
    await client
      .db("durable")
      .collection("t")
      .insertOne({ _id: 1 } as never);
    await client.close();
    await mongo.stop();
    appendFileSync(path.join(dir, journals(dir).at(-1)!), Buffer.from([50, 0, 0, 0, 7]));
    writeFileSync(path.join(dir, "journal.000099"), "");
    mongo = await startEmbeddedMongo({ dbPath: dir });
    client = new MongoClient(mongo.uri);
    try {
      expect(await client.db("durable").collection("t").countDocuments()).to.equal(1);
      await client
        .db("durable")
        .collection("t")
        .insertOne({ _id: 2 } as never); // goes to journal.000099
    } finally {
      await client.close();
      await mongo.stop();
    }
    // Damage followed by written journal is corruption: refused.
    appendFileSync(path.join(dir, "journal.000001"), Buffer.from([50, 0, 0, 0, 7]));
    const err = await startEmbeddedMongo({ dbPath: dir }).catch((e) => e);
    expect(String(err)).to.contain("damaged");
  });

  it("a change stream resumes across a restart (replica set on a dbPath)", async () => {
    let mongo = await startEmbeddedMongo({ dbPath: dir, replSet: "rs0" });
    let client = new MongoClient(mongo.uri);
    const coll = () => client.db("durable").collection("watched");
    await coll().insertOne({ _id: 1, v: 0 } as never);
    const opened = await client.db("durable").command({ aggregate: "watched", pipeline: [{ $changeStream: {} }], cursor: {} });
    await coll().updateOne({ _id: 1 as never }, { $set: { v: 1 }, $unset: { gone: "" } });
    const seen = await client.db("durable").command({ getMore: cursorIdOf(opened), collection: "watched", maxTimeMS: 500 });
    const token = seen.cursor.nextBatch[0]._id;
    // Written after the client's last event, before the restart: must still be delivered.
    await coll().updateOne({ _id: 1 as never }, { $set: { v: 2, added: true } });
    await coll().deleteOne({ _id: 1 as never });
    await client.close();
    await mongo.stop();

    mongo = await startEmbeddedMongo({ dbPath: dir, replSet: "rs0" });
    client = new MongoClient(mongo.uri);
    try {
      const resumed = await client.db("durable").command({ aggregate: "watched", pipeline: [{ $changeStream: { resumeAfter: token } }], cursor: {} });
      const events = resumed.cursor.firstBatch;
      expect(events.map((e: { operationType: string }) => e.operationType)).to.deep.equal(["update", "delete"]);
      expect(events[0].updateDescription).to.deep.equal({ updatedFields: { v: 2, added: true }, removedFields: [], truncatedArrays: [] });
      expect(events[1].documentKey).to.deep.equal({ _id: 1 });
    } finally {
      await client.close();
      await mongo.stop();
    }
  });

  it("refuses a second server on the same dbPath", async () => {
    const mongo = await startEmbeddedMongo({ dbPath: dir });
    try {
      const err = await startEmbeddedMongo({ dbPath: dir }).catch((e) => e);
      expect(String(err)).to.contain("DBPathInUse");
    } finally {
      await mongo.stop();
    }
  });

  it("loses no acknowledged write when the server is killed with SIGKILL at a random moment", async () => {
    let { child, uri } = await startCli(dir, ["--replSet", "rs0"]);
    const acknowledged: number[] = [];
    const client = new MongoClient(uri.replace("?replicaSet=rs0", "?directConnection=true"), { retryWrites: false, maxPoolSize: 16 });
    const coll = client.db("durable").collection<{ _id: number; v: string }>("burst");
    let next = 0;
    let stop = false;
    const writer = async () => {
      while (!stop) {
        const id = next++;
        try {
          await coll.insertOne({ _id: id, v: "x".repeat(100) });
          acknowledged.push(id);
        } catch {
          return; // the server is gone
        }
      }
    };
    const writers = Array.from({ length: 16 }, writer);
    // Killed once more than 50 writes are acknowledged, then at a random moment of the burst: counted, not timed,
    // so a loaded machine that acknowledges fewer writes a second still kills mid-burst.
    while (acknowledged.length <= 50) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, Math.random() * 700));
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    stop = true;
    await Promise.all(writers);
    await client.close().catch(() => undefined);
    expect(acknowledged.length).to.be.above(50);

    ({ child, uri } = await startCli(dir));
    const after = new MongoClient(uri);
    try {
      const present = new Set(
        (
          await after
            .db("durable")
            .collection("burst")
            .find({}, { projection: { _id: 1 } })
            .toArray()
        ).map((d) => d._id as unknown as number),
      );
      const lost = acknowledged.filter((id) => !present.has(id));
      expect(lost, `${lost.length} of ${acknowledged.length} acknowledged writes lost; ${present.size} present`).to.deep.equal([]);
    } finally {
      await after.close();
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    }
  });
});
