import { expect } from "chai";
import { MongoClient, MongoServerError, type Document } from "mongodb";
import { targetUri, useTestDatabase } from "./helpers.ts";

// configureFailPoint / failCommand, as a real mongod started with enableTestCommands answers it.
describe("embedded-mongo: failCommand fail point", () => {
  const t = useTestDatabase("em_fail_points");
  const admin = () => t.client.db("admin");
  const failPoint = (mode: unknown, data?: Document) => admin().command({ configureFailPoint: "failCommand", mode, ...(data ? { data } : {}) });

  afterEach(async () => {
    await failPoint("off");
  });

  it("fails the next n matching commands with the given code, then lets them through", async () => {
    const c = t.db.collection("times");
    const res = await failPoint({ times: 1 }, { failCommands: ["insert"], errorCode: 91 });
    expect(res.ok).to.equal(1);
    const err = await c.insertOne({ _id: 1 } as Document).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(MongoServerError);
    expect((err as MongoServerError).code).to.equal(91);
    expect((err as MongoServerError).codeName).to.equal("ShutdownInProgress");
    expect((err as MongoServerError).message).to.equal("Failing command via 'failCommand' failpoint");
    await c.insertOne({ _id: 2 } as Document);
    expect(await c.countDocuments()).to.equal(1);
  });

  it("does not fail commands it does not name, nor configureFailPoint itself", async () => {
    await failPoint("alwaysOn", { failCommands: ["find", "configureFailPoint"], errorCode: 2 });
    await t.db.collection("other").insertOne({ x: 1 });
    const err = await t.db
      .collection("other")
      .findOne({})
      .catch((e: unknown) => e);
    expect((err as MongoServerError).code).to.equal(2);
    // still failing: alwaysOn
    expect(
      (
        (await t.db
          .collection("other")
          .findOne({})
          .catch((e: unknown) => e)) as MongoServerError
      ).code,
    ).to.equal(2);
    await failPoint("off");
    expect(await t.db.collection("other").findOne({}, { projection: { _id: 0 } })).to.deep.equal({ x: 1 });
  });

  it("skips the first n matching commands in {skip: n} mode and reports how often it fired", async () => {
    await failPoint({ skip: 1 }, { failCommands: ["count"], errorCode: 8 });
    expect(await t.db.command({ count: "skip" })).to.include({ n: 0 });
    const err = await t.db.command({ count: "skip" }).catch((e: unknown) => e);
    expect((err as MongoServerError).code).to.equal(8);
    const { count } = await failPoint("off");
    expect(Number(count)).to.be.greaterThan(0);
  });

  it("closes the connection instead of answering with closeConnection", async () => {
    await failPoint({ times: 1 }, { failCommands: ["find"], closeConnection: true });
    // runCommand is never retried by the driver, so the closed connection surfaces as a network error.
    const err = await t.db.command({ find: "closed" }).catch((e: unknown) => e);
    expect((err as Error).name).to.equal("MongoNetworkError");
    expect(await t.db.collection("closed").findOne({})).to.equal(null);
  });

  it("delays only the blocked command's reply (blockConnection), other connections keep being served", async () => {
    const blocked = new MongoClient(await targetUri(), { appName: "blocked-app" });
    try {
      await blocked.connect();
      await failPoint({ times: 1 }, { failCommands: ["find"], blockConnection: true, blockTimeMS: 400, appName: "blocked-app" });
      const started = Date.now();
      const slow = blocked
        .db(t.db.databaseName)
        .collection("block")
        .findOne({})
        .then(() => Date.now() - started);
      await new Promise((r) => setTimeout(r, 50));
      // Another client (other appName) is served while the blocked reply waits.
      const pingStarted = Date.now();
      await t.db.collection("block").findOne({});
      expect(Date.now() - pingStarted).to.be.lessThan(300);
      expect(await slow).to.be.at.least(380);
    } finally {
      await blocked.close();
    }
  });

  it("answers a blocked command with the error after the delay when errorCode is also set", async () => {
    await failPoint({ times: 1 }, { failCommands: ["distinct"], blockConnection: true, blockTimeMS: 100, errorCode: 50 });
    const started = Date.now();
    const err = await t.db
      .collection("bd")
      .distinct("x")
      .catch((e: unknown) => e);
    expect((err as MongoServerError).code).to.equal(50);
    expect(Date.now() - started).to.be.at.least(90);
  });

  it("only fails connections whose handshake announced the given appName", async () => {
    const named = new MongoClient(await targetUri(), { appName: "payments-worker" });
    try {
      await failPoint("alwaysOn", { failCommands: ["find"], errorCode: 2, appName: "payments-worker" });
      expect(await t.db.collection("app").findOne({})).to.equal(null);
      const err = await named
        .db(t.db.databaseName)
        .collection("app")
        .findOne({})
        .catch((e: unknown) => e);
      expect((err as MongoServerError).code).to.equal(2);
    } finally {
      await named.close();
    }
  });

  it("adds a writeConcernError to a write that still applies, with the given errorLabels", async () => {
    const c = t.db.collection("wce");
    await failPoint(
      { times: 1 },
      {
        failCommands: ["insert"],
        writeConcernError: { code: 100, codeName: "UnsatisfiableWriteConcern", errmsg: "Not enough data-bearing nodes" },
      },
    );
    const err = await c.insertOne({ _id: 1 } as Document).catch((e: unknown) => e);
    expect((err as Error).name).to.equal("MongoWriteConcernError");
    expect((err as MongoServerError).code).to.equal(100);
    expect(await c.countDocuments({ _id: 1 } as Document)).to.equal(1);

    const raw = await t.db.command({ insert: "wce", documents: [{ _id: 2 }] });
    expect(raw).to.not.have.property("writeConcernError");
    await failPoint({ times: 1 }, { failCommands: ["insert"], errorCode: 11600, errorLabels: ["SomeLabel"] });
    const labelled = await t.db.command({ insert: "wce", documents: [{ _id: 3 }] }).catch((e: unknown) => e);
    expect((labelled as MongoServerError).errorLabels).to.include("SomeLabel");
  });

  it("answers mongod's errors for an unknown fail point, a bad mode and a non-admin database", async () => {
    const unknown = await admin()
      .command({ configureFailPoint: "noSuchFailPoint", mode: "alwaysOn" })
      .catch((e: unknown) => e);
    expect((unknown as MongoServerError).code).to.equal(157);
    expect((unknown as MongoServerError).message).to.equal("noSuchFailPoint not found");
    const badMode = await failPoint("sometimes").catch((e: unknown) => e);
    expect((badMode as MongoServerError).code).to.equal(2);
    expect((badMode as MongoServerError).message).to.equal("unknown mode: sometimes");
    const notAdmin = await t.db.command({ configureFailPoint: "failCommand", mode: "off" }).catch((e: unknown) => e);
    expect((notAdmin as MongoServerError).code).to.equal(13);
  });
});
