import { expect } from "chai";
import { MongoClient } from "mongodb";
import { startEmbeddedMongo } from "../../src/embedded-mongo/index.ts";

// The public API itself (these run against embedded servers of their own, whatever MONGODB_URI says).
describe("embedded-mongo: startEmbeddedMongo", () => {
  it("listens on an ephemeral port by default and stops cleanly", async () => {
    const server = await startEmbeddedMongo();
    expect(server.uri).to.match(/^mongodb:\/\/127\.0\.0\.1:\d+\/$/);
    expect(server.port).to.be.greaterThan(0);
    const client = new MongoClient(server.uri);
    await client.db("api").collection("c").insertOne({ a: 1 });
    expect(await client.db("api").collection("c").countDocuments()).to.equal(1);
    await client.close();
    await server.stop();
    const refused = new MongoClient(server.uri, { serverSelectionTimeoutMS: 300 });
    const err = await refused
      .db("api")
      .command({ ping: 1 })
      .catch((e) => e);
    expect(err).to.be.instanceOf(Error);
    await refused.close();
  });

  it("keeps separate servers' data apart", async () => {
    const [a, b] = await Promise.all([startEmbeddedMongo(), startEmbeddedMongo()]);
    const ca = new MongoClient(a.uri);
    const cb = new MongoClient(b.uri);
    try {
      await ca.db("x").collection("c").insertOne({ from: "a" });
      expect(await cb.db("x").collection("c").countDocuments()).to.equal(0);
    } finally {
      await Promise.all([ca.close(), cb.close()]);
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it("can run in a worker thread", async function () {
    this.timeout(20000);
    const server = await startEmbeddedMongo({ inWorkerThread: true });
    const client = new MongoClient(server.uri);
    try {
      const c = client.db("worker").collection("c");
      await c.insertMany([{ n: 1 }, { n: 2 }]);
      expect(await c.findOneAndUpdate({ n: 2 }, { $inc: { n: 1 } }, { returnDocument: "after" })).to.include({ n: 3 });
    } finally {
      await client.close();
      await server.stop();
    }
  });
});
