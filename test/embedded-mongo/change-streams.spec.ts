import { expect } from "chai";
import { Long, MongoClient, Timestamp, type ChangeStreamDocument, type Db, type Document } from "mongodb";
import { startEmbeddedMongo } from "../../src/embedded-mongo/index.ts";
import { type AtLeast, cursorIdOf, expectAtLeast, useReplicaSet } from "./helpers.ts";

/** The next `n` events (or more) of a raw change stream cursor, by getMore. */
async function nextEvents<N extends number>(db: Db, reply: Document, n: N): Promise<Document[] & AtLeast<Document, N>> {
  const events: Document[] = [...reply.cursor.firstBatch];
  const collection = (reply.cursor.ns as string).slice(db.databaseName.length + 1);
  while (events.length < n) {
    const more = await db.command({ getMore: cursorIdOf(reply), collection, maxTimeMS: 500 });
    events.push(...more.cursor.nextBatch);
  }
  expectAtLeast(events, n);
  return events;
}

describe("embedded-mongo: change streams (replica set)", function () {
  this.timeout(20000);
  const rs = useReplicaSet("cs");

  it("collection level: insert, update, replace and delete events in mongod's shape", async () => {
    const coll = rs.db.collection("events");
    await coll.insertOne({ _id: 0 as never, seed: true });
    const opened = await rs.db.command({ aggregate: "events", pipeline: [{ $changeStream: {} }], cursor: {} });
    expect(opened.cursor.firstBatch).to.deep.equal([]);
    expect(opened.cursor.postBatchResumeToken._data).to.match(/^[0-9A-F]+$/);
    expect(opened.cursor.ns).to.equal("cs.events");
    await coll.insertOne({ _id: 1 as never, a: 1, nested: { x: 1, y: 2 }, arr: [1, 2, 3] });
    await coll.updateOne({ _id: 1 as never }, { $set: { a: 2, "nested.x": 5 }, $unset: { "nested.y": "" }, $pop: { arr: 1 } });
    await coll.replaceOne({ _id: 1 as never }, { b: 1 });
    await coll.deleteOne({ _id: 1 as never });
    const [insert, update, replace, del] = await nextEvents(rs.db, opened, 4);

    expect(Object.keys(insert)).to.deep.equal(["_id", "operationType", "clusterTime", "wallTime", "fullDocument", "ns", "documentKey"]);
    expect(insert).to.deep.include({ operationType: "insert", ns: { db: "cs", coll: "events" }, documentKey: { _id: 1 } });
    expect(insert.fullDocument).to.deep.equal({ _id: 1, a: 1, nested: { x: 1, y: 2 }, arr: [1, 2, 3] });
    expect(insert.clusterTime).to.be.instanceOf(Timestamp);
    expect(insert.wallTime).to.be.instanceOf(Date);
    expect(Object.keys(insert._id)).to.deep.equal(["_data"]);

    expect(update.operationType).to.equal("update");
    expect(update).to.not.have.property("fullDocument");
    expect(update.updateDescription).to.deep.equal({
      updatedFields: { a: 2, "nested.x": 5 },
      removedFields: ["nested.y"],
      truncatedArrays: [{ field: "arr", newSize: 2 }],
    });
    expect(replace).to.deep.include({ operationType: "replace", fullDocument: { _id: 1, b: 1 }, documentKey: { _id: 1 } });
    expect(del).to.deep.include({ operationType: "delete", documentKey: { _id: 1 } });
    expect(del).to.not.have.property("fullDocument");
    // Strictly increasing cluster times.
    const times = [insert, update, replace, del].map((e) => e.clusterTime as Timestamp);
    times.reduce((earlier, later) => {
      expect(later.greaterThan(earlier)).to.equal(true);
      return later;
    });
    await rs.db.command({ killCursors: "events", cursors: [cursorIdOf(opened)] });
  });

  it("fullDocument: updateLookup gives the current document; whenAvailable null; required fails without images", async () => {
    const coll = rs.db.collection("lookup");
    await coll.insertOne({ _id: 1 as never, n: 0 });
    const lookup = await rs.db.command({ aggregate: "lookup", pipeline: [{ $changeStream: { fullDocument: "updateLookup" } }], cursor: {} });
    const whenAvailable = await rs.db.command({
      aggregate: "lookup",
      pipeline: [{ $changeStream: { fullDocument: "whenAvailable", fullDocumentBeforeChange: "whenAvailable" } }],
      cursor: {},
    });
    const required = await rs.db.command({ aggregate: "lookup", pipeline: [{ $changeStream: { fullDocument: "required" } }], cursor: {} });
    await coll.updateOne({ _id: 1 as never }, { $inc: { n: 1 } });
    await coll.updateOne({ _id: 1 as never }, { $inc: { n: 1 } });
    const [first] = await nextEvents(rs.db, lookup, 1);
    expect(first.fullDocument).to.deep.equal({ _id: 1, n: 2 }); // looked up when read: the latest version
    const [available] = await nextEvents(rs.db, whenAvailable, 1);
    expect(available.fullDocument).to.equal(null);
    expect(available.fullDocumentBeforeChange).to.equal(null);
    const failed = await rs.db.command({ getMore: cursorIdOf(required), collection: "lookup" }).catch((e) => e);
    expect(failed.code).to.equal(47);
    expect(failed.codeName).to.equal("NoMatchingDocument");
  });

  it("gives pre- and post-images of a collection created with changeStreamPreAndPostImages", async () => {
    await rs.db.createCollection("images", { changeStreamPreAndPostImages: { enabled: true } });
    const coll = rs.db.collection("images");
    await coll.insertOne({ _id: 1 as never, v: 1 });
    const opened = await rs.db.command({
      aggregate: "images",
      pipeline: [{ $changeStream: { fullDocument: "required", fullDocumentBeforeChange: "required" } }],
      cursor: {},
    });
    await coll.updateOne({ _id: 1 as never }, { $set: { v: 2 } });
    const [event] = await nextEvents(rs.db, opened, 1);
    expect(event.fullDocument).to.deep.equal({ _id: 1, v: 2 });
    expect(event.fullDocumentBeforeChange).to.deep.equal({ _id: 1, v: 1 });
  });

  it("applies later $match and $project stages; refuses other stages and a removed _id", async () => {
    const coll = rs.db.collection("filtered");
    const opened = await rs.db.command({
      aggregate: "filtered",
      pipeline: [{ $changeStream: {} }, { $match: { "fullDocument.keep": true } }, { $project: { operationType: 1, "fullDocument.keep": 1 } }],
      cursor: {},
    });
    await coll.insertMany([{ keep: false }, { keep: true, other: 1 }]);
    const [event] = await nextEvents(rs.db, opened, 1);
    expect(Object.keys(event)).to.have.members(["_id", "operationType", "fullDocument"]);
    expect(event.fullDocument).to.deep.equal({ keep: true });

    const group = await rs.db
      .command({ aggregate: "filtered", pipeline: [{ $changeStream: {} }, { $group: { _id: null } }], cursor: {} })
      .catch((e) => e);
    expect(group.code).to.equal(20);
    const emptyStage = await rs.db.command({ aggregate: "filtered", pipeline: [{ $changeStream: {} }, {}], cursor: {} }).catch((e) => e);
    expect(emptyStage.code).to.equal(40323);
    const noId = await rs.db.command({ aggregate: "filtered", pipeline: [{ $changeStream: {} }, { $project: { _id: 0 } }], cursor: {} });
    await coll.insertOne({ x: 1 });
    const fatal = await rs.db.command({ getMore: cursorIdOf(noId), collection: "filtered", maxTimeMS: 500 }).catch((e) => e);
    expect(fatal.code).to.equal(280);
  });

  it("a $match on the operation type keeps updates whole; one on updateDescription sees it", async () => {
    const coll = rs.db.collection("described");
    await coll.insertOne({ _id: 1 as never, a: 1, b: 1 });
    const byType = await rs.db.command({
      aggregate: "described",
      pipeline: [{ $changeStream: {} }, { $match: { operationType: { $in: ["update"] } } }],
      cursor: {},
    });
    const byField = await rs.db.command({
      aggregate: "described",
      pipeline: [{ $changeStream: {} }, { $match: { $or: [{ "updateDescription.updatedFields.b": { $exists: true } }] } }],
      cursor: {},
    });
    await coll.insertOne({ _id: 2 as never, a: 1 });
    await coll.updateOne({ _id: 1 as never }, { $set: { a: 2 } });
    await coll.updateOne({ _id: 1 as never }, { $set: { b: 2 }, $unset: { a: "" } });
    const [first, second] = await nextEvents(rs.db, byType, 2);
    expect(Object.keys(first)).to.deep.equal(["_id", "operationType", "clusterTime", "wallTime", "ns", "documentKey", "updateDescription"]);
    expect(first.updateDescription).to.deep.equal({ updatedFields: { a: 2 }, removedFields: [], truncatedArrays: [] });
    expect(second.updateDescription).to.deep.equal({ updatedFields: { b: 2 }, removedFields: ["a"], truncatedArrays: [] });
    const [onlyB] = await nextEvents(rs.db, byField, 1);
    expect(onlyB.updateDescription).to.deep.equal(second.updateDescription);
    expect(onlyB._id).to.deep.equal(second._id);
  });

  it("a later $match may compare the event's fields with $expr (an insert due within a second of its wallTime), updates kept whole", async () => {
    const coll = rs.db.collection("due_soon");
    const stream = await rs.db.command({
      aggregate: "due_soon",
      pipeline: [
        { $changeStream: {} },
        { $match: { operationType: { $in: ["insert", "update"] } } },
        { $match: { $or: [{ operationType: "update" }, { $expr: { $lte: ["$fullDocument.due", { $add: ["$wallTime", 1000] }] } }] } },
      ],
      cursor: {},
    });
    await coll.insertOne({ _id: 1 as never, due: new Date(Date.now() + 3_600_000) });
    await coll.insertOne({ _id: 2 as never, due: new Date() });
    await coll.updateOne({ _id: 1 as never }, { $set: { due: new Date() } });
    const [soon, update, ...rest] = await nextEvents(rs.db, stream, 2);
    expect(rest).to.deep.equal([]);
    expect(soon.operationType).to.equal("insert");
    expect(soon.documentKey).to.deep.equal({ _id: 2 });
    expect(update.operationType).to.equal("update");
    expect(Object.keys(update.updateDescription)).to.deep.equal(["updatedFields", "removedFields", "truncatedArrays"]);
  });

  it("database and cluster level streams see every collection (cluster: every database)", async () => {
    const dbStream = rs.db.watch();
    const clusterStream = rs.client.watch();
    const other = rs.client.db("cs_other");
    try {
      // The driver opens a stream on its first read.
      expect(await dbStream.tryNext()).to.equal(null);
      expect(await clusterStream.tryNext()).to.equal(null);
      await rs.db.collection("a").insertOne({ n: 1 });
      await rs.db.collection("b").insertOne({ n: 2 });
      await other.collection("c").insertOne({ n: 3 });
      const fromDb = [await dbStream.next(), await dbStream.next()] as ChangeStreamDocument<Document>[];
      expect(fromDb.map((e) => "ns" in e && e.ns)).to.deep.equal([
        { db: "cs", coll: "a" },
        { db: "cs", coll: "b" },
      ]);
      const fromCluster = [await clusterStream.next(), await clusterStream.next(), await clusterStream.next()];
      expect(fromCluster.map((e) => ("ns" in e ? `${e.ns.db}.${"coll" in e.ns ? e.ns.coll : ""}` : ""))).to.deep.equal([
        "cs.a",
        "cs.b",
        "cs_other.c",
      ]);
      const wrongDb = await rs.db
        .command({ aggregate: 1, pipeline: [{ $changeStream: { allChangesForCluster: true } }], cursor: {} })
        .catch((e) => e);
      expect(wrongDb.ok).to.equal(0);
    } finally {
      await dbStream.close();
      await clusterStream.close();
      await other.dropDatabase();
    }
  });

  it("resumes with resumeAfter, startAfter and startAtOperationTime", async () => {
    const coll = rs.db.collection("resume");
    const opened = await rs.db.command({ aggregate: "resume", pipeline: [{ $changeStream: {} }], cursor: {} });
    await coll.insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3 }] as never[]);
    const events = await nextEvents(rs.db, opened, 3);
    const ids = (reply: Document) => (reply.cursor.firstBatch as Document[]).map((e) => e.documentKey._id);
    const after = await rs.db.command({ aggregate: "resume", pipeline: [{ $changeStream: { resumeAfter: events[0]._id } }], cursor: {} });
    expect(ids(after)).to.deep.equal([2, 3]);
    const startAfter = await rs.db.command({ aggregate: "resume", pipeline: [{ $changeStream: { startAfter: events[1]._id } }], cursor: {} });
    expect(ids(startAfter)).to.deep.equal([3]);
    const at = await rs.db.command({
      aggregate: "resume",
      pipeline: [{ $changeStream: { startAtOperationTime: events[1].clusterTime } }],
      cursor: {},
    });
    expect(ids(at)).to.deep.equal([2, 3]);
    // A high-water mark (postBatchResumeToken of an empty batch) resumes after everything seen so far.
    const hwm = await rs.db.command({
      aggregate: "resume",
      pipeline: [{ $changeStream: { resumeAfter: after.cursor.postBatchResumeToken } }],
      cursor: {},
    });
    expect(ids(hwm)).to.deep.equal([]);
    await coll.insertOne({ _id: 4 } as never);
    expect((await nextEvents(rs.db, hwm, 1)).map((e) => e.documentKey._id)).to.deep.equal([4]);
    const both = await rs.db
      .command({ aggregate: "resume", pipeline: [{ $changeStream: { resumeAfter: events[0]._id, startAfter: events[0]._id } }], cursor: {} })
      .catch((e) => e);
    expect(both.code).to.equal(40674);
    const lost = await rs.db
      .command({ aggregate: "resume", pipeline: [{ $changeStream: { startAtOperationTime: new Timestamp({ t: 1, i: 1 }) } }], cursor: {} })
      .catch((e) => e);
    expect(lost.code).to.equal(286);
  });

  it("a dropped collection's stream ends with drop then invalidate; startAfter continues past the invalidate", async () => {
    const coll = rs.db.collection("dropme");
    await coll.insertOne({ x: 1 });
    const opened = await rs.db.command({ aggregate: "dropme", pipeline: [{ $changeStream: {} }], cursor: {} });
    await coll.drop();
    const more = await rs.db.command({ getMore: cursorIdOf(opened), collection: "dropme", maxTimeMS: 500 });
    const batch: Document[] = more.cursor.nextBatch;
    expectAtLeast(batch, 2);
    const [drop, invalidate] = batch;
    expect(drop).to.deep.include({ operationType: "drop", ns: { db: "cs", coll: "dropme" } });
    expect(invalidate.operationType).to.equal("invalidate");
    expect(Long.fromValue(more.cursor.id).isZero()).to.equal(true);
    const resume = await rs.db
      .command({ aggregate: "dropme", pipeline: [{ $changeStream: { resumeAfter: invalidate._id } }], cursor: {} })
      .catch((e) => e);
    expect(resume.code).to.equal(260);
    const restarted = await rs.db.command({ aggregate: "dropme", pipeline: [{ $changeStream: { startAfter: invalidate._id } }], cursor: {} });
    await coll.insertOne({ again: true });
    const [next] = await nextEvents(rs.db, restarted, 1);
    expect(next.fullDocument.again).to.equal(true);
  });

  it("getMore waits up to maxTimeMS for events without blocking the server, then answers an empty batch", async () => {
    const opened = await rs.db.command({ aggregate: "wait", pipeline: [{ $changeStream: {} }], cursor: {} });
    const other = new MongoClient(rs.mongo.uri);
    try {
      const started = Date.now();
      let answered = false;
      const waiting = rs.db.command({ getMore: cursorIdOf(opened), collection: "wait", maxTimeMS: 300 }).finally(() => {
        answered = true;
      });
      // Another client is served while the getMore waits: its ping is answered first.
      expect(await other.db("cs").command({ ping: 1 })).to.include({ ok: 1 });
      expect(answered, "the getMore was still waiting when the ping was answered").to.equal(false);
      const empty = await waiting;
      expect(Date.now() - started).to.be.at.least(280);
      expect(empty.cursor.nextBatch).to.deep.equal([]);
      expect(empty.cursor.postBatchResumeToken._data).to.be.a("string");
      // An event arriving during the wait ends it with the event (a wait that ran out would answer an empty batch).
      const second = rs.db.command({ getMore: cursorIdOf(opened), collection: "wait", maxTimeMS: 30_000 });
      await new Promise((r) => setTimeout(r, 50));
      await other.db("cs").collection("wait").insertOne({ late: 1 });
      const woken = await second;
      expect(woken.cursor.nextBatch[0].fullDocument.late).to.equal(1);
      // A killCursors with one id of the wrong type kills none, not even the stream's.
      const refused = await rs.db.command({ killCursors: "wait", cursors: [cursorIdOf(opened), 7] }).catch((e) => e);
      expect([refused.code, refused.errmsg]).to.deep.equal([14, "BSON field 'killCursors.cursors.1' is the wrong type 'int', expected type 'long'"]);
      const killed = await rs.db.command({ killCursors: "wait", cursors: [cursorIdOf(opened)] });
      expect(killed.cursorsKilled.map(String)).to.deep.equal([String(opened.cursor.id)]);
      const gone = await rs.db.command({ getMore: cursorIdOf(opened), collection: "wait" }).catch((e) => e);
      expect(gone.code).to.equal(43);
    } finally {
      await other.close();
    }
  });

  it("the driver's collection.watch with updateLookup delivers changes and closes", async () => {
    const coll = rs.db.collection<{ _id: string; status: string }>("watched");
    const stream = coll.watch([{ $match: { operationType: { $in: ["insert", "update", "replace"] }, "fullDocument.status": "pending" } }], {
      fullDocument: "updateLookup",
    });
    const seen: string[] = [];
    stream.on("change", (change) => {
      if ("fullDocument" in change && change.fullDocument) seen.push(`${change.operationType}:${change.fullDocument._id}`);
    });
    try {
      await new Promise((r) => setTimeout(r, 100)); // the driver opens the stream on the first listener
      await coll.insertOne({ _id: "a", status: "pending" });
      await coll.insertOne({ _id: "b", status: "done" });
      await coll.updateOne({ _id: "b" }, { $set: { status: "pending" } });
      const deadline = Date.now() + 5000;
      while (seen.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(seen).to.deep.equal(["insert:a", "update:b"]);
    } finally {
      await stream.close();
    }
  });

  it("a standalone server keeps answering 40573", async () => {
    const standalone = await startEmbeddedMongo();
    const c = new MongoClient(standalone.uri);
    try {
      const err = await c
        .db("cs")
        .command({ aggregate: "x", pipeline: [{ $changeStream: {} }], cursor: {} })
        .catch((e) => e);
      expect(err.code).to.equal(40573);
    } finally {
      await c.close();
      await standalone.stop();
    }
  });
});
