import { expect } from "chai";
import { Long, type Document } from "mongodb";
import { useReplicaSet } from "./helpers.ts";

describe("embedded-mongo: onPrimaryTransactionalWrite per statement of a retryable write", function () {
  this.timeout(20000);
  const rs = useReplicaSet("stmts", { client: { retryWrites: false }, dropBeforeEach: false });

  afterEach(async () => {
    await rs.client.db("admin").command({ configureFailPoint: "onPrimaryTransactionalWrite", mode: "off" });
  });

  const failPoint = (mode: Document, data: Document = {}) =>
    rs.client.db("admin").command({ configureFailPoint: "onPrimaryTransactionalWrite", mode, data });
  // Each test runs its raw commands in its own explicit session (the driver sends that session's lsid).
  const inSession = () => {
    const session = rs.client.startSession();
    return (cmd: Document) => rs.db.command(cmd, { session });
  };

  it("fails only the statement it fires on; the retry keeps the statements that ran and runs the failed one", async () => {
    await rs.db.collection("u").insertMany([
      { _id: 0, y: 0 },
      { _id: 1, y: 0 },
    ] as Document[]);
    await failPoint({ skip: 1 }, { closeConnection: false, failBeforeCommitExceptionCode: 1 });
    const run = inSession();
    const cmd = {
      update: "u",
      updates: [
        { q: { _id: 0 }, u: { $inc: { y: 1 } } },
        { q: { _id: 1 }, u: { $inc: { y: 1 } } },
      ],
      ordered: true,
      txnNumber: Long.fromNumber(2),
    };
    const first = await run(cmd);
    expect(first.nModified).to.equal(1);
    expect(first.writeErrors).to.have.length(1);
    expect(first.writeErrors[0]).to.include({ index: 1, code: 1 });

    await rs.client.db("admin").command({ configureFailPoint: "onPrimaryTransactionalWrite", mode: "off" });
    const retry = await run(cmd);
    expect(retry).to.include({ n: 2, nModified: 2 });
    expect(retry.writeErrors).to.equal(undefined);
    expect(await rs.db.collection("u").find().sort({ _id: 1 }).toArray()).to.deep.equal([
      { _id: 0, y: 1 },
      { _id: 1, y: 1 },
    ]);
    // A second retry answers the same, applying nothing.
    expect(await run(cmd)).to.include({ n: 2, nModified: 2 });
    expect((await rs.db.collection("u").findOne({ _id: 0 } as Document))?.y).to.equal(1);
  });

  it("closes the connection after the statement it fires on: the command stops there and the retry runs the rest once", async () => {
    await failPoint({ skip: 1 }, {});
    const run = inSession();
    const cmd = {
      insert: "i",
      documents: [{ _id: 1 }, { _id: 2 }, { _id: 3 }],
      ordered: true,
      txnNumber: Long.fromNumber(1),
    };
    const lost = await run(cmd).catch((e) => e as Error);
    expect(lost).to.be.instanceOf(Error);
    expect(String((lost as Error).message)).to.match(/closed/);
    // The first two statements ran (the fail point fired on the second, after skipping the first).
    expect(await rs.db.collection("i").countDocuments()).to.equal(2);

    await rs.client.db("admin").command({ configureFailPoint: "onPrimaryTransactionalWrite", mode: "off" });
    const retry = await run(cmd);
    expect(retry).to.include({ n: 3, ok: 1 });
    expect(retry.writeErrors).to.equal(undefined);
    expect(await rs.db.collection("i").find().sort({ _id: 1 }).toArray()).to.deep.equal([{ _id: 1 }, { _id: 2 }, { _id: 3 }]);
  });

  it("is not consulted for the statements a retry replays, and counts upserts of replayed statements", async () => {
    await failPoint({ times: 1 }, {});
    const run = inSession();
    const cmd = {
      update: "up",
      updates: [
        { q: { _id: 5 }, u: { $set: { v: 1 } }, upsert: true },
        { q: { _id: 6 }, u: { $set: { v: 2 } }, upsert: true },
      ],
      txnNumber: Long.fromNumber(7),
    };
    await run(cmd).catch(() => undefined);
    // The fail point, now off after one firing, would fire again if the replayed statement asked it.
    await failPoint({ times: 1 }, { closeConnection: false, failBeforeCommitExceptionCode: 91 });
    const retry = await run(cmd);
    // The replayed upsert counts; the second statement ran and met the fail point.
    expect(retry.n).to.equal(1);
    expect(retry.upserted).to.deep.equal([{ index: 0, _id: 5 }]);
    expect(retry.writeErrors[0]).to.include({ index: 1, code: 91 });
  });
});
