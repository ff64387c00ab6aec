// Group commit of single-document writes: one command for writes of the same turn, one outcome per caller.
import { expect } from "chai";
import { MongoClient, type Collection } from "mongodb";
import { batchedConditionalUpdate, batchedInsert, batchedUpdate, rawInsertsOnce, rawUpdates } from "../../src/store/write-batcher.ts";
import { freshDatabaseUri } from "../support/database.ts";

interface Doc {
  _id: string;
  phone: string;
  n?: number;
}

describe("write batcher", () => {
  let client: MongoClient;
  let collection: Collection<Doc>;
  const commands: string[] = [];
  before(async () => {
    client = new MongoClient(await freshDatabaseUri("batcher"), { monitorCommands: true });
    client.on("commandStarted", (event) => commands.push(event.commandName));
    await client.connect();
    collection = client.db().collection<Doc>("docs");
    await collection.createIndex({ phone: 1 }, { unique: true, name: "phone_unique" });
  });
  after(async () => {
    await client.close();
  });

  it("sends inserts of the same turn as one command and answers each caller on its own", async () => {
    const insert = batchedInsert<Doc>(client.db(), "docs");
    commands.length = 0;
    const outcomes = await Promise.all([
      insert({ _id: "a", phone: "+1" }),
      insert({ _id: "b", phone: "+2" }),
      insert({ _id: "c", phone: "+1" }), // duplicate phone within the batch
      insert({ _id: "d", phone: "+3" }),
    ]);
    expect(commands.filter((c) => c === "insert")).to.have.length(1);
    expect(outcomes.map((o) => o?.code ?? null)).to.deep.equal([null, null, 11000, null]);
    expect(await collection.countDocuments()).to.equal(3);
  });

  it("explains a duplicate with the index it hit when asked", async () => {
    const insert = batchedInsert<Doc>(client.db(), "docs", { explainDuplicates: true });
    const [ok, duplicate] = await Promise.all([insert({ _id: "e", phone: "+5" }), insert({ _id: "f", phone: "+2" })]);
    expect(ok).to.equal(null);
    expect(duplicate).to.include({ code: 11000 });
    expect(duplicate!.keyPattern).to.deep.equal({ phone: 1 });
  });

  it("sends updates of the same turn as one command", async () => {
    await collection.insertMany([
      { _id: "u1", phone: "+11" },
      { _id: "u2", phone: "+12" },
      { _id: "u3", phone: "+13" },
    ]);
    const update = batchedUpdate<Doc>(client.db(), "docs");
    commands.length = 0;
    const outcomes = await Promise.all(["u1", "u2", "u3"].map((id, n) => update({ updateOne: { filter: { _id: id }, update: { $set: { n } } } })));
    expect(outcomes).to.deep.equal([null, null, null]);
    expect(commands.filter((c) => c === "update")).to.have.length(1);
    expect(
      (
        await collection
          .find({ _id: { $in: ["u1", "u2", "u3"] } })
          .sort({ _id: 1 })
          .toArray()
      ).map((d) => d.n),
    ).to.deep.equal([0, 1, 2]);
  });

  it("answers conditional updates applied when all of their batch matched, unknown when any did not, and throws write errors", async () => {
    await collection.insertMany([
      { _id: "c1", phone: "+21", n: 1 },
      { _id: "c2", phone: "+22", n: 1 },
    ]);
    const update = batchedConditionalUpdate<Doc>(client.db(), "docs");
    const bump = (id: string, from: number) => update({ updateOne: { filter: { _id: id, n: from }, update: { $set: { n: from + 1 } } } });
    commands.length = 0;
    expect(await Promise.all([bump("c1", 1), bump("c2", 1)])).to.deep.equal(["applied", "applied"]);
    expect(commands.filter((c) => c === "update")).to.have.length(1);
    // c1 is at 2 now: its update does not match, so nobody of that batch can tell which applied.
    expect(await Promise.all([bump("c1", 1), bump("c2", 2)])).to.deep.equal(["unknown", "unknown"]);
    expect((await collection.findOne({ _id: "c2" }))?.n).to.equal(3);
    const duplicate = await update({ updateOne: { filter: { _id: "c1" }, update: { $set: { phone: "+22" } } } }).catch((e: unknown) => e);
    expect((duplicate as { code?: number }).code).to.equal(11000);
  });

  it("fails every caller of a batch when the command itself fails", async () => {
    const broken = new MongoClient(await freshDatabaseUri("batcher"));
    await broken.connect();
    const insert = batchedInsert<Doc>(broken.db(), "docs");
    await broken.close();
    const results = await Promise.allSettled([insert({ _id: "x", phone: "+7" }), insert({ _id: "y", phone: "+8" })]);
    expect(results.map((r) => r.status)).to.deep.equal(["rejected", "rejected"]);
  });

  it("rawUpdates: sends the updates in commands of at most the given size, answers how many matched, throws a write error", async () => {
    // A collection of its own: the other tests count the documents of theirs.
    const raw = client.db().collection<Doc>("raw_docs");
    await raw.createIndex({ phone: 1 }, { unique: true });
    await raw.insertMany([
      { _id: "r1", phone: "+r1", n: 1 },
      { _id: "r2", phone: "+r2", n: 1 },
      { _id: "r3", phone: "+r3", n: 1 },
    ]);
    commands.length = 0;
    const matched = await rawUpdates(
      client.db(),
      "raw_docs",
      ["r1", "r2", "r3", "missing"].map((id) => ({ q: { _id: id, n: 1 }, u: { $inc: { n: 1 }, $set: { at: new Date(0) } } })),
      3,
    );
    expect(matched).to.equal(3);
    expect(commands.filter((c) => c === "update")).to.have.length(2);
    expect((await raw.find({ _id: { $in: ["r1", "r2", "r3"] } }).toArray()).map((d) => d.n)).to.deep.equal([2, 2, 2]);
    const duplicate = await rawUpdates(client.db(), "raw_docs", [{ q: { _id: "r1" }, u: { $set: { phone: "+r2" } } }], 10).catch(
      (error: unknown) => error,
    );
    expect(duplicate).to.be.instanceOf(Error);
    expect((duplicate as { code?: number }).code).to.equal(11000);
  });

  it("rawInsertsOnce: inserts in commands of at most the given size, answers the duplicates by their index, throws other errors", async () => {
    const once = client.db().collection<Doc>("once_docs");
    await once.createIndex({ phone: 1 }, { unique: true });
    await once.insertOne({ _id: "o1", phone: "+o1" });
    commands.length = 0;
    const duplicates = await rawInsertsOnce(
      client.db(),
      "once_docs",
      [
        { _id: "o1", phone: "+o1" },
        { _id: "o2", phone: "+o2" },
        { _id: "o3", phone: "+o3" },
        { _id: "o4", phone: "+o2" },
      ],
      2,
    );
    expect([...duplicates].sort()).to.deep.equal([0, 3]);
    expect(commands.filter((c) => c === "insert")).to.have.length(2);
    expect((await once.find({}).sort({ _id: 1 }).toArray()).map((d) => d._id)).to.deep.equal(["o1", "o2", "o3"]);
    const invalid = await rawInsertsOnce(client.db(), "once_docs", [{ _id: "o5", phone: "+o5" }, { _id: { $bad: 1 } }], 10).catch(
      (error: unknown) => error,
    );
    expect(invalid).to.be.instanceOf(Error);
  });

  it("raw commands carry the write concern MONGODB_URI names, as the driver's own writes do, and none when it names none", async () => {
    const uri = new URL(await freshDatabaseUri("batcher_concern"));
    uri.searchParams.set("w", "1");
    uri.searchParams.set("journal", "true");
    uri.searchParams.set("wtimeoutMS", "2500");
    const concerned = new MongoClient(uri.toString(), { monitorCommands: true });
    const sent: Record<string, unknown>[] = [];
    concerned.on("commandStarted", (event) => {
      if (event.commandName === "insert" || event.commandName === "update") sent.push(event.command);
    });
    try {
      await rawInsertsOnce(concerned.db(), "concern_docs", [{ _id: "w1", phone: "+w1" }], 10);
      await rawUpdates(concerned.db(), "concern_docs", [{ q: { _id: "w1" }, u: { $set: { n: 1 } } }], 10);
      await concerned
        .db()
        .collection("concern_docs")
        .insertOne({ _id: "w2" } as never);
      expect(sent.map((command) => command.writeConcern)).to.deep.equal([
        { w: 1, j: true, wtimeout: 2500 },
        { w: 1, j: true, wtimeout: 2500 },
        { w: 1, j: true, wtimeout: 2500 },
      ]);
    } finally {
      await concerned.close();
    }
    const plain: Record<string, unknown>[] = [];
    const listener = (event: { commandName: string; command: Record<string, unknown> }) => {
      if (event.commandName === "insert") plain.push(event.command);
    };
    client.on("commandStarted", listener);
    try {
      await rawInsertsOnce(client.db(), "concern_docs", [{ _id: "p1", phone: "+p1" }], 10);
    } finally {
      client.off("commandStarted", listener);
    }
    expect(plain).to.have.length(1);
    expect(plain[0]).to.not.have.property("writeConcern");
  });
});
