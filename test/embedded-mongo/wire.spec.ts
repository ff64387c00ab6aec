import { expect } from "chai";
import net from "node:net";
import { deserialize, serialize, type Document } from "bson";
import { MongoServerError } from "mongodb";
import { targetUri, useTestDatabase } from "./helpers.ts";

const OP_REPLY = 1;
const OP_QUERY = 2004;
const OP_MSG = 2013;

function frame(opCode: number, body: Buffer, requestId = 1): Buffer {
  const header = Buffer.alloc(16);
  header.writeInt32LE(16 + body.length, 0);
  header.writeInt32LE(requestId, 4);
  header.writeInt32LE(0, 8);
  header.writeInt32LE(opCode, 12);
  return Buffer.concat([header, body]);
}

function opMsg(command: Document, flags = 0, checksum = false): Buffer {
  const flagBuf = Buffer.alloc(4);
  flagBuf.writeUInt32LE(flags | (checksum ? 1 : 0));
  const parts = [flagBuf, Buffer.from([0]), Buffer.from(serialize(command))];
  if (checksum) parts.push(Buffer.alloc(4)); // CRC-32C value is not verified by the server
  return frame(OP_MSG, Buffer.concat(parts));
}

function opQuery(ns: string, command: Document): Buffer {
  const flags = Buffer.alloc(4);
  const nums = Buffer.alloc(8);
  nums.writeInt32LE(-1, 4);
  return frame(OP_QUERY, Buffer.concat([flags, Buffer.from(`${ns}\0`), nums, Buffer.from(serialize(command))]));
}

/** A raw wire connection that collects replies and notices when the server closes it. */
class RawClient {
  private buffer = Buffer.alloc(0);
  private waiters: ((reply: { opCode: number; doc: Document }) => void)[] = [];
  closed: Promise<void>;

  private constructor(readonly socket: net.Socket) {
    this.closed = new Promise((resolve) => socket.on("close", () => resolve()));
    socket.on("error", () => undefined);
    socket.on("data", (chunk) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      while (this.buffer.length >= 4 && this.buffer.length >= this.buffer.readInt32LE(0)) {
        const len = this.buffer.readInt32LE(0);
        const msg = this.buffer.subarray(0, len);
        this.buffer = this.buffer.subarray(len);
        const opCode = msg.readInt32LE(12);
        const docStart = opCode === OP_REPLY ? 36 : 21;
        this.waiters.shift()?.({ opCode, doc: deserialize(msg.subarray(docStart)) });
      }
    });
  }

  static async connect(): Promise<RawClient> {
    const url = new URL(await targetUri());
    const socket = net.connect(Number(url.port || 27017), url.hostname.replace(/^\[|\]$/g, ""));
    await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
    return new RawClient(socket);
  }

  send(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  request(bytes: Buffer): Promise<{ opCode: number; doc: Document }> {
    const reply = new Promise<{ opCode: number; doc: Document }>((resolve) => this.waiters.push(resolve));
    this.send(bytes);
    return reply;
  }

  /** True when the server closes the connection within `ms`. */
  async closesWithin(ms: number): Promise<boolean> {
    return Promise.race([this.closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
  }

  /** Bad input must either close this connection or be answered with an error (both are mongod behaviours). */
  async refuses(bytes: Buffer, ms = 2000): Promise<boolean> {
    const reply = new Promise<boolean>((resolve) => this.waiters.push(({ doc }) => resolve(doc.ok === 0)));
    this.send(bytes);
    return Promise.race([this.closed.then(() => true), reply, new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
  }
}

describe("embedded-mongo: wire protocol and robustness", () => {
  const t = useTestDatabase("em_wire");

  it("answers a legacy OP_QUERY isMaster with an OP_REPLY describing a standalone", async () => {
    const client = await RawClient.connect();
    const { opCode, doc } = await client.request(opQuery("admin.$cmd", { isMaster: 1, helloOk: true }));
    expect(opCode).to.equal(OP_REPLY);
    expect(doc.ismaster).to.equal(true);
    expect(doc.ok).to.equal(1);
    expect(doc.maxWireVersion).to.be.at.least(17);
    expect(doc).to.have.property("logicalSessionTimeoutMinutes");
    expect(doc).to.not.have.property("setName");
    client.socket.destroy();
  });

  it("answers OP_MSG hello, tolerating the checksum flag", async () => {
    const client = await RawClient.connect();
    const { opCode, doc } = await client.request(opMsg({ hello: 1, $db: "admin" }, 0, true));
    expect(opCode).to.equal(OP_MSG);
    expect(doc.isWritablePrimary).to.equal(true);
    client.socket.destroy();
  });

  it("sends no reply for moreToCome messages but applies them", async () => {
    const client = await RawClient.connect();
    client.send(opMsg({ insert: "fire_and_forget", documents: [{ _id: 1 }], $db: "em_wire", writeConcern: { w: 0 } }, 2));
    const { doc } = await client.request(opMsg({ count: "fire_and_forget", $db: "em_wire" }));
    expect(doc.n).to.equal(1); // the first reply on the wire is the count's: the insert got none
    client.socket.destroy();
  });

  it("closes only the offending connection on an unknown opcode", async () => {
    const bad = await RawClient.connect();
    expect(await bad.refuses(frame(9999, Buffer.alloc(8)))).to.equal(true);
    bad.socket.destroy();
    expect(await t.db.command({ ping: 1 })).to.include({ ok: 1 });
  });

  it("closes the connection on a frame over 48 MB without buffering it", async () => {
    const bad = await RawClient.connect();
    const header = Buffer.alloc(16);
    header.writeInt32LE(64 * 1024 * 1024, 0);
    header.writeInt32LE(OP_MSG, 12);
    bad.send(header);
    expect(await bad.closesWithin(2000)).to.equal(true);
    expect(await t.db.command({ ping: 1 })).to.include({ ok: 1 });
  });

  it("survives malformed BSON and truncated frames", async () => {
    const bad = await RawClient.connect();
    const body = Buffer.concat([Buffer.alloc(4), Buffer.from([0]), Buffer.from([0x30, 0, 0, 0, 0x02, 0x61])]);
    expect(await bad.refuses(frame(OP_MSG, body))).to.equal(true);
    bad.socket.destroy();
    const truncated = await RawClient.connect();
    truncated.send(opMsg({ ping: 1, $db: "admin" }).subarray(0, 20));
    truncated.socket.destroy();
    const tooShort = await RawClient.connect();
    const header = Buffer.alloc(16);
    header.writeInt32LE(8, 0);
    tooShort.send(header);
    expect(await tooShort.closesWithin(2000)).to.equal(true);
    expect(await t.db.command({ ping: 1 })).to.include({ ok: 1 });
  });

  it("answers unknown commands with 59 CommandNotFound", async () => {
    const err = await t.db.command({ noSuchCommandAtAll: 1 }).catch((e) => e);
    expect(err).to.be.instanceOf(MongoServerError);
    expect(err.code).to.equal(59);
    expect(err.codeName).to.equal("CommandNotFound");
  });

  it("refuses transactions like a standalone mongod (20 IllegalOperation)", async () => {
    const session = t.client.startSession();
    try {
      session.startTransaction();
      const err = await t.db
        .collection("tx")
        .insertOne({ a: 1 }, { session })
        .catch((e) => e);
      // The driver rewraps mongod's code 20 reply as "does not support retryable writes", keeping the original.
      const original = err.originalError ?? err;
      expect(original).to.be.instanceOf(MongoServerError);
      expect(original.code).to.equal(20);
      expect(original.message).to.equal("Transaction numbers are only allowed on a replica set member or mongos");
    } finally {
      await session.abortTransaction().catch(() => undefined);
      await session.endSession();
    }
  });

  it("refuses $changeStream with 40573", async () => {
    await t.db.collection("cs").insertOne({ a: 1 });
    const err = await t.db.command({ aggregate: "cs", pipeline: [{ $changeStream: {} }], cursor: {} }).catch((e) => e);
    expect(err).to.be.instanceOf(MongoServerError);
    expect(err.code).to.equal(40573);
  });

  it("stays up under random garbage frames (deterministic fuzz)", async function () {
    if (process.env.MONGODB_URI) this.skip(); // only our own server is fuzzed
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const valid = opMsg({ find: "fuzz", filter: { a: { $gt: 1 } }, $db: "em_wire" });
    for (let round = 0; round < 60; round++) {
      const client = await RawClient.connect();
      // Mutate a valid frame's body (keeping its length field) so parsing gets past the header.
      const bytes = Buffer.from(valid);
      for (let k = 0; k < 1 + Math.floor(rand() * 6); k++) bytes[16 + Math.floor(rand() * (bytes.length - 16))] = Math.floor(rand() * 256);
      client.send(bytes);
      await Promise.race([client.closed, new Promise((r) => setTimeout(r, 20))]);
      client.socket.destroy();
    }
    expect(await t.db.command({ ping: 1 })).to.include({ ok: 1 });
  });
});
