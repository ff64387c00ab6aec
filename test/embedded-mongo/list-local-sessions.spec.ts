import { expect } from "chai";
import { Binary, MongoClient } from "mongodb";
import { failure, useReplicaSet } from "./helpers.ts";

function sameId(a: Binary, b: Binary): boolean {
  return Buffer.from(a.buffer).equals(Buffer.from(b.buffer));
}

describe("embedded-mongo: $listLocalSessions", function () {
  this.timeout(20000);
  const rs = useReplicaSet("lls", { dropBeforeEach: false });

  it("lists a session the client used, with mongod's fields", async () => {
    const session = rs.client.startSession();
    await rs.client.db("lls").collection("c").insertOne({ x: 1 }, { session });
    const id = (session.id as { id: Binary }).id;
    const listed = await rs.client
      .db("admin")
      .aggregate([{ $listLocalSessions: { allUsers: true } }])
      .toArray();
    const mine = listed.find((s) => sameId(s._id.id, id));
    expect(mine, "the session is listed").to.not.equal(undefined);
    expect(mine!._id.uid).to.be.instanceOf(Binary);
    expect(mine!._id.uid.buffer.length).to.equal(32);
    expect(mine!.lastUse).to.be.instanceOf(Date);
    // {} lists the current user's sessions: every session, without authentication. Later stages run on them.
    const projected = await rs.client
      .db("other")
      .aggregate([{ $listLocalSessions: {} }, { $project: { _id: 0, id: "$_id.id" } }])
      .toArray();
    expect(projected.filter((s) => sameId(s.id, id))).to.have.length(1);
    // Sessions of named users: none is authenticated here.
    expect(
      await rs.client
        .db("admin")
        .aggregate([{ $listLocalSessions: { users: [{ user: "u", db: "admin" }] } }])
        .toArray(),
    ).to.deep.equal([]);
    await session.endSession();
  });

  it("forgets a session once it is ended", async () => {
    const other = new MongoClient(rs.mongo.uri);
    const session = other.startSession();
    await other.db("lls").command({ ping: 1 }, { session });
    const id = (session.id as { id: Binary }).id;
    const has = async () =>
      (
        await rs.client
          .db("admin")
          .aggregate([{ $listLocalSessions: { allUsers: true } }])
          .toArray()
      ).filter((s) => sameId(s._id.id, id)).length;
    expect(await has()).to.equal(1);
    await session.endSession();
    await other.close(); // sends endSessions for its pooled sessions
    expect(await has()).to.equal(0);
  });

  it("must be the first stage of a database-level aggregate", async () => {
    const onCollection = await failure(
      rs.client
        .db("lls")
        .collection("c")
        .aggregate([{ $listLocalSessions: {} }])
        .toArray(),
    );
    expect(onCollection.code).to.equal(73);
    const notFirst = await failure(
      rs.client
        .db("lls")
        .aggregate([{ $match: {} }, { $listLocalSessions: {} }])
        .toArray(),
    );
    expect(notFirst.code).to.equal(40602);
    const badSpec = await failure(
      rs.client
        .db("lls")
        .aggregate([{ $listLocalSessions: { nope: 1 } }])
        .toArray(),
    );
    expect(badSpec.code).to.equal(40415);
  });
});
