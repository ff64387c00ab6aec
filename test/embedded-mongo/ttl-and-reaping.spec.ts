import { expect } from "chai";
import { MongoClient } from "mongodb";
import { startEmbeddedMongo } from "../../src/embedded-mongo/index.ts";
import { cursorIdOf, useTestDatabase, usingRealMongo, waitFor } from "./helpers.ts";

describe("embedded-mongo: TTL indexes", function () {
  // mongod's TTL monitor runs every 60 s; the embedded suite's sweeper runs every 100 ms.
  const ttlWaitMs = usingRealMongo ? 130_000 : 5_000;
  this.timeout(ttlWaitMs + 10_000);
  const t = useTestDatabase("em_ttl");

  it("deletes documents whose date is older than expireAfterSeconds, and only those", async () => {
    const c = t.db.collection("sessions");
    await c.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 });
    const specs = await c.indexes();
    expect(specs.find((s) => s.name === "expiresAt_1")?.expireAfterSeconds).to.equal(0);
    const now = Date.now();
    await c.insertMany([
      { _id: "past", expiresAt: new Date(now - 60_000) },
      { _id: "future", expiresAt: new Date(now + 3_600_000) },
      { _id: "not-a-date", expiresAt: "yesterday" },
      { _id: "no-field" },
      { _id: "array", expiresAt: [new Date(now + 3_600_000), new Date(now - 60_000)] },
    ] as never[]);
    await waitFor(async () => (await c.countDocuments()) === 3, ttlWaitMs);
    expect((await c.find().sort({ _id: 1 }).toArray()).map((d) => d._id)).to.deep.equal(["future", "no-field", "not-a-date"]);
  });

  it("honours expireAfterSeconds relative to the stored date, with a partial filter", async () => {
    const c = t.db.collection("idempotency");
    await c.createIndex({ createdAt: 1 }, { expireAfterSeconds: 3600, partialFilterExpression: { done: true } });
    const now = Date.now();
    await c.insertMany([
      { _id: "old-done", createdAt: new Date(now - 7_200_000), done: true },
      { _id: "old-running", createdAt: new Date(now - 7_200_000), done: false },
      { _id: "fresh-done", createdAt: new Date(now - 60_000), done: true },
    ] as never[]);
    await waitFor(async () => (await c.countDocuments()) === 2, ttlWaitMs);
    expect((await c.find().sort({ _id: 1 }).toArray()).map((d) => d._id)).to.deep.equal(["fresh-done", "old-running"]);
  });
});

describe("embedded-mongo: idle cursor reaping", () => {
  before(function () {
    if (usingRealMongo) this.skip(); // mongod's timeout is 10 minutes; only the embedded one can be shortened
  });

  it("discards a cursor idle for longer than cursorTimeoutMs", async () => {
    const server = await startEmbeddedMongo({ cursorTimeoutMs: 800 });
    const client = new MongoClient(server.uri);
    try {
      const db = client.db("em_reap");
      await db.collection("c").insertMany(Array.from({ length: 10 }, (_, i) => ({ i })));
      const reply = await db.command({ find: "c", filter: {}, batchSize: 2 });
      const alive = await db.command({ getMore: cursorIdOf(reply), collection: "c", batchSize: 2 });
      expect(alive.cursor.nextBatch).to.have.length(2);
      await new Promise((r) => setTimeout(r, 2000));
      const err = await db.command({ getMore: cursorIdOf(reply), collection: "c" }).catch((e) => e);
      expect(err.code).to.equal(43);
    } finally {
      await client.close();
      await server.stop();
    }
  });
});
