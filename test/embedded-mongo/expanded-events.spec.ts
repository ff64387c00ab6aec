import { expect } from "chai";
import type { Db, Document } from "mongodb";
import { cursorIdOf, expectLength, useReplicaSet } from "./helpers.ts";

/** The next `n` events of a raw change stream cursor, by getMore (fewer when the stream ends). */
async function nextEvents(db: Db, reply: Document, n: number): Promise<Document[]> {
  const events: Document[] = [...reply.cursor.firstBatch];
  const collection = (reply.cursor.ns as string).slice(db.databaseName.length + 1);
  for (let tries = 0; events.length < n && tries < 10; tries++) {
    const more = await db.command({ getMore: cursorIdOf(reply), collection, maxTimeMS: 200 });
    events.push(...more.cursor.nextBatch);
  }
  return events;
}

function open(db: Db, target: string | 1, options: Document = { showExpandedEvents: true }): Promise<Document> {
  return db.command({ aggregate: target, pipeline: [{ $changeStream: options }], cursor: {} });
}

describe("embedded-mongo: change streams with showExpandedEvents", function () {
  this.timeout(20000);
  const rs = useReplicaSet("expanded");

  it("reports create (collection and view), createIndexes, dropIndexes, modify and drop with the collection's UUID", async () => {
    const stream = await open(rs.db, 1);
    await rs.db.createCollection("c");
    await rs.db.createCollection("v", { viewOn: "c", pipeline: [{ $match: { a: 1 } }] });
    await rs.db.collection("c").createIndex({ a: 1 }, { name: "a_1" });
    await rs.db.command({ collMod: "c", index: { name: "a_1", hidden: true } });
    await rs.db.collection("c").dropIndex("a_1");
    await rs.db.collection("c").insertOne({ _id: 1 } as never);
    await rs.db.collection("c").drop();
    const events = await nextEvents(rs.db, stream, 8);
    expect(events.map((e) => e.operationType)).to.deep.equal(["create", "create", "createIndexes", "modify", "dropIndexes", "insert", "drop"]);
    expectLength(events, 7);
    const uuid = events[0].collectionUUID.toString("hex");
    expect(events[0].ns).to.deep.equal({ db: "expanded", coll: "c" });
    expect(events[0].operationDescription).to.deep.equal({ idIndex: { v: 2, key: { _id: 1 }, name: "_id_" } });
    expect(events[1]).to.not.have.property("collectionUUID");
    expect(events[1].operationDescription).to.deep.equal({ viewOn: "c", pipeline: [{ $match: { a: 1 } }] });
    expect(events[2].operationDescription).to.deep.equal({ indexes: [{ v: 2, key: { a: 1 }, name: "a_1" }] });
    expect(events[3].operationDescription).to.deep.equal({ index: { name: "a_1", hidden: true } });
    expect(events[3].stateBeforeChange.collectionOptions.uuid.toString("hex")).to.equal(uuid);
    expect(events[4].operationDescription).to.deep.equal({ indexes: [{ v: 2, key: { a: 1 }, name: "a_1", hidden: true }] });
    for (const e of events.filter((x) => x.operationType !== "create" || x.ns.coll === "c")) {
      expect(e.collectionUUID.toString("hex"), e.operationType).to.equal(uuid);
    }
  });

  it("hides these events and fields without the option, as before", async () => {
    const stream = await open(rs.db, 1, {});
    await rs.db.createCollection("c");
    await rs.db.collection("c").createIndex({ a: 1 });
    await rs.db.collection("c").insertOne({ _id: 1, a: { "1": 1 } } as never);
    await rs.db.collection("c").updateOne({ _id: 1 } as never, { $set: { "a.1": 2 } });
    const events = await nextEvents(rs.db, stream, 2);
    expect(events.map((e) => e.operationType)).to.deep.equal(["insert", "update"]);
    expectLength(events, 2);
    expect(events[0]).to.not.have.property("collectionUUID");
    expect(events[1].updateDescription).to.deep.equal({ updatedFields: { "a.1": 2 }, removedFields: [], truncatedArrays: [] });
  });

  it("disambiguatedPaths lists ambiguous paths component by component, array indexes as numbers", async () => {
    await rs.db.collection("c").insertOne({ _id: 1, a: { "1": 1 }, arr: [{ "2": 1 }, 5], plain: { x: 1 } } as never);
    const stream = await open(rs.db, "c");
    await rs.db.collection("c").updateOne({ _id: 1 } as never, { $set: { "a.1": 2, "arr.0.2": 3, "arr.1": 6, "plain.x": 2 } });
    await rs.db.collection("c").updateOne({ _id: 1 } as never, { $set: { "plain.x": 3 } });
    const events = await nextEvents(rs.db, stream, 2);
    expectLength(events, 2);
    const [first, second] = events;
    expect(first.updateDescription.updatedFields).to.deep.equal({ "a.1": 2, "arr.0.2": 3, "arr.1": 6, "plain.x": 2 });
    expect(first.updateDescription.disambiguatedPaths).to.deep.equal({ "a.1": ["a", "1"], "arr.0.2": ["arr", 0, "2"] });
    expect(second.updateDescription.disambiguatedPaths).to.deep.equal({});
  });

  it("the option must be a boolean", async () => {
    const err = await open(rs.db, 1, { showExpandedEvents: 1 }).catch((e) => e);
    expect(err.code).to.equal(14);
  });
});
