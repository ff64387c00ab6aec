import { expect } from "chai";
import { Long, MongoClient, ObjectId, Timestamp } from "mongodb";
import { useReplicaSet } from "./helpers.ts";

describe("embedded-mongo: one-member replica set (replSet option)", function () {
  this.timeout(20000);
  const rs = useReplicaSet("rs", { dropBeforeEach: false });

  it("reports the set in hello: this member is the writable primary", async () => {
    const client = new MongoClient(rs.mongo.uri);
    try {
      const hello = await client.db("admin").command({ hello: 1 });
      const me = `127.0.0.1:${rs.mongo.port}`;
      expect(hello).to.include({ setName: "rs0", isWritablePrimary: true, secondary: false, primary: me, me, setVersion: 1, ok: 1 });
      expect(hello.hosts).to.deep.equal([me]);
      expect(hello.topologyVersion.processId).to.be.instanceOf(ObjectId);
      expect(hello.electionId).to.be.instanceOf(ObjectId);
      expect(hello.lastWrite.opTime.ts).to.be.instanceOf(Timestamp);
      expect(hello.lastWrite.majorityOpTime.ts).to.be.instanceOf(Timestamp);
      const legacy = await client.db("admin").command({ isMaster: 1 });
      expect(legacy).to.include({ ismaster: true, setName: "rs0" });
    } finally {
      await client.close();
    }
  });

  it("is seen as ReplicaSetWithPrimary with ?replicaSet=rs0, and reachable with directConnection", async () => {
    expect(rs.mongo.uri).to.equal(`mongodb://127.0.0.1:${rs.mongo.port}/?replicaSet=rs0`);
    const client = new MongoClient(rs.mongo.uri, { serverSelectionTimeoutMS: 5000 });
    const direct = new MongoClient(`mongodb://127.0.0.1:${rs.mongo.port}/?directConnection=true`);
    let description: { type: string; setName: string | null } | undefined;
    client.on("topologyDescriptionChanged", (e) => (description = e.newDescription));
    try {
      await client.connect();
      expect(description?.type).to.equal("ReplicaSetWithPrimary");
      expect(description?.setName).to.equal("rs0");
      await client.db("rs").collection("c").insertOne({ a: 1 });
      await direct.connect();
      expect(await direct.db("rs").collection("c").countDocuments()).to.equal(1);
    } finally {
      await client.close();
      await direct.close();
    }
  });

  it("stamps $clusterTime and operationTime on replies, advancing with writes", async () => {
    const client = new MongoClient(rs.mongo.uri);
    try {
      const db = client.db("rs");
      const first = await db.command({ ping: 1 });
      expect(first.$clusterTime.clusterTime).to.be.instanceOf(Timestamp);
      expect(first.$clusterTime.signature.keyId).to.satisfy((k: unknown) => Long.fromValue(k as number).isZero());
      const insert = await db.command({ insert: "times", documents: [{ x: 1 }] });
      expect(insert.operationTime.greaterThan(first.operationTime)).to.equal(true);
      const failed = await db.command({ nosuchcommand: 1 }).catch((e) => e);
      expect(failed.code).to.equal(59);
    } finally {
      await client.close();
    }
  });

  it("streams hellos to the driver's monitor without a busy loop (awaitable hello)", async () => {
    const client = new MongoClient(rs.mongo.uri, { heartbeatFrequencyMS: 500 });
    let heartbeats = 0;
    let failures = 0;
    client.on("serverHeartbeatSucceeded", () => heartbeats++);
    client.on("serverHeartbeatFailed", () => failures++);
    try {
      await client.connect();
      await new Promise((r) => setTimeout(r, 1600));
      expect(failures).to.equal(0);
      // ~1 awaited reply per 500 ms plus RTT pings, not thousands.
      expect(heartbeats).to.be.within(2, 12);
    } finally {
      await client.close();
    }
  });

  it("puts its topologyVersion on not-primary errors, so the driver retries at once", async () => {
    const client = new MongoClient(rs.mongo.uri);
    try {
      const admin = client.db("admin");
      await admin.command({ configureFailPoint: "failCommand", mode: { times: 1 }, data: { failCommands: ["insert"], errorCode: 10107 } });
      const err = await client
        .db("rs")
        .command({ insert: "tv", documents: [{}] })
        .catch((e) => e);
      const hello = await admin.command({ hello: 1 });
      expect(err.code).to.equal(10107);
      expect(String(err.topologyVersion?.processId)).to.equal(String(hello.topologyVersion.processId));
      await admin.command({
        configureFailPoint: "failCommand",
        mode: { times: 1 },
        data: { failCommands: ["insert"], errorCode: 189, errorLabels: ["RetryableWriteError"] },
      });
      const started = Date.now();
      await client.db("rs").collection("tv").insertOne({ retried: true });
      expect(Date.now() - started).to.be.below(400);
    } finally {
      await client.close();
    }
  });

  it("answers session commands as mongod does", async () => {
    const client = new MongoClient(rs.mongo.uri);
    try {
      const admin = client.db("admin");
      const started = await admin.command({ startSession: 1 });
      expect(started.timeoutMinutes).to.equal(30);
      expect(started.id.id.sub_type).to.equal(4);
      expect(await admin.command({ refreshSessions: [started.id] })).to.include({ ok: 1 });
      expect(await admin.command({ endSessions: [started.id] })).to.include({ ok: 1 });
    } finally {
      await client.close();
    }
  });
});
