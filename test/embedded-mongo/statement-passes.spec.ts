import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Long, MongoClient, type Document } from "mongodb";
import { startEmbeddedMongo } from "../../src/embedded-mongo/index.ts";
import { STATEMENTS_PER_PASS } from "../../src/embedded-mongo/server/statement-passes.ts";
import { useReplicaSet } from "./helpers.ts";

type Numbered = { _id: number; [field: string]: unknown };

// A long write runs its statements a pass at a time, other connections' commands between the passes (as mongod
// yields between the batches of a write); its reply, oplog entries and retry record stay those of one command.
describe("embedded-mongo: long writes yield to other commands between passes", function () {
  this.timeout(30000);
  const rs = useReplicaSet("passes");
  const docs = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ _id: from + i, pad: "x".repeat(200) }));

  it("answers a read sent during a large unordered insert before the insert ends, seeing part of it", async () => {
    const reader = new MongoClient(rs.mongo.uri);
    await reader.connect();
    await rs.db.createCollection("big");
    const total = 5_000;
    let insertDone = false;
    const insert = rs.db.command({ insert: "big", documents: docs(total), ordered: false }).finally(() => {
      insertDone = true;
    });
    const seen: number[] = [];
    while (!insertDone) seen.push(await reader.db("passes").collection("big").estimatedDocumentCount());
    const reply = await insert;
    await reader.close();
    expect(reply).to.deep.include({ n: total, ok: 1 });
    expect(reply.writeErrors).to.equal(undefined);
    // Without passes every read would see none or all of the documents.
    expect(
      seen.some((n) => n > 0 && n < total),
      `counts seen: ${seen.slice(0, 20).join(",")}...`,
    ).to.equal(true);
    expect(await rs.db.collection("big").countDocuments()).to.equal(total);
  });

  it("answers an unordered insert's write errors by index across passes, and streams each insert once, in order", async () => {
    const coll = rs.db.collection<Numbered>("dups");
    const taken = [3, STATEMENTS_PER_PASS, STATEMENTS_PER_PASS + 1, 200];
    await coll.insertMany(taken.map((_id) => ({ _id, old: true })));
    const stream = coll.watch();
    await stream.tryNext(); // the stream is open before the insert
    const total = 300;
    const reply = await rs.db.command({ insert: "dups", documents: docs(total), ordered: false });
    expect(reply.n).to.equal(total - taken.length);
    expect(reply.writeErrors.map((e: Document) => [e.index, e.code])).to.deep.equal(taken.map((i) => [i, 11000]));
    expect(reply.writeErrors[1].errmsg).to.equal(
      `E11000 duplicate key error collection: passes.dups index: _id_ dup key: { _id: ${STATEMENTS_PER_PASS} }`,
    );
    expect(await coll.countDocuments({ old: true })).to.equal(taken.length);
    expect(await coll.countDocuments()).to.equal(total);
    const ids: unknown[] = [];
    while (ids.length < total - taken.length) {
      const event = await stream.next();
      expect(event.operationType).to.equal("insert");
      ids.push((event as { documentKey: { _id: unknown } }).documentKey._id);
    }
    expect(ids).to.deep.equal(
      docs(total)
        .map((d) => d._id)
        .filter((id) => !taken.includes(id)),
    );
    await stream.close();
  });

  it("stops an ordered insert at its first error, wherever the passes end", async () => {
    const coll = rs.db.collection<Numbered>("ordered");
    await coll.insertOne({ _id: 150 });
    const reply = await rs.db.command({ insert: "ordered", documents: docs(300), ordered: true });
    expect(reply.n).to.equal(150);
    expect(reply.writeErrors.map((e: Document) => e.index)).to.deep.equal([150]);
    expect(await coll.countDocuments()).to.equal(151);
    expect(await coll.countDocuments({ _id: { $gt: 150 } })).to.equal(0);
  });

  it("keeps a long retryable insert once: its retry answers the same reply, and runs again only what failed", async () => {
    const raw = new MongoClient(rs.mongo.uri);
    const session = raw.startSession();
    const run = (cmd: Document) => raw.db("passes").command(cmd, { session });
    const whole = { insert: "retried", documents: docs(300), ordered: false, txnNumber: Long.fromNumber(1) };
    const first = await run(whole);
    const retry = await run(whole);
    expect(first).to.deep.include({ n: 300, ok: 1 });
    expect(retry).to.deep.include({ n: 300, ok: 1 });
    expect(retry.writeErrors).to.equal(undefined);

    await rs.db.collection<Numbered>("retried2").insertOne({ _id: 100 });
    const failing = { insert: "retried2", documents: docs(300), ordered: false, txnNumber: Long.fromNumber(2) };
    const once = await run(failing);
    expect(once.n).to.equal(299);
    expect(once.writeErrors.map((e: Document) => e.index)).to.deep.equal([100]);
    await rs.db.collection<Numbered>("retried2").deleteOne({ _id: 100 });
    // The statements that ran are replayed; the one that failed runs now, and succeeds.
    const again = await run(failing);
    expect(again).to.deep.include({ n: 300, ok: 1 });
    expect(again.writeErrors).to.equal(undefined);
    expect(await rs.db.collection("retried2").countDocuments()).to.equal(300);
    await session.endSession();
    await raw.close();
  });

  it("answers long updates and deletes as one command: n, nModified, upserted by index", async () => {
    const coll = rs.db.collection<Numbered>("upd");
    await coll.insertMany(docs(100).map(({ _id }) => ({ _id, v: 0 })));
    const updates = Array.from({ length: 200 }, (_, i) => ({ q: { _id: i }, u: { $set: { v: i % 2 } }, upsert: true }));
    const reply = await rs.db.command({ update: "upd", updates });
    // 0..99 matched (the odd ones modified), 100..199 upserted.
    expect(reply.n).to.equal(200);
    expect(reply.nModified).to.equal(50);
    expect(reply.upserted.map((u: Document) => [u.index, u._id])).to.deep.equal(Array.from({ length: 100 }, (_, i) => [100 + i, 100 + i]));
    const deletes = Array.from({ length: 150 }, (_, i) => ({ q: { _id: i * 2 }, limit: 1 }));
    const deleted = await rs.db.command({ delete: "upd", deletes });
    expect(deleted).to.deep.include({ n: 100, ok: 1 });
    expect(await coll.countDocuments()).to.equal(100);
  });

  it("keeps a transaction's long insert invisible until its commit", async () => {
    await rs.db.createCollection("tx");
    const session = rs.client.startSession();
    session.startTransaction();
    await rs.db.collection<Numbered>("tx").insertMany(docs(500), { session, ordered: false });
    expect(await rs.db.collection("tx").countDocuments()).to.equal(0);
    await session.commitTransaction();
    await session.endSession();
    expect(await rs.db.collection("tx").countDocuments()).to.equal(500);
  });

  it("journals every statement of a long insert in durable mode (all there after a restart)", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "embedded-mongo-passes-"));
    try {
      let mongo = await startEmbeddedMongo({ dbPath: dir, replSet: "rs0" });
      let client = new MongoClient(mongo.uri);
      const reply = await client.db("d").command({ insert: "c", documents: docs(1000), ordered: false });
      expect(reply).to.deep.include({ n: 1000, ok: 1 });
      await client.close();
      await mongo.stop();
      mongo = await startEmbeddedMongo({ dbPath: dir, replSet: "rs0" });
      client = new MongoClient(mongo.uri);
      expect(await client.db("d").collection("c").countDocuments()).to.equal(1000);
      await client.close();
      await mongo.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
