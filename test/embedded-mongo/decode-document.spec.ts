// The server decodes a command's bytes into values holding their BSON number types: an int32 as a JS number, a
// double as a JS number unless it holds an integer of the int32 range (then a bson Double), an int64 as a Long.
// Its own decoder (decode.ts) does so for the types commands carry and leaves the rest to bson's; the answer must
// be the same as bson's with every number a wrapper, then held, for every document, and malformed bytes fail with
// bson's errors.
import { expect } from "chai";
import {
  Binary,
  BSONSymbol,
  Code,
  DBRef,
  Decimal128,
  deserialize,
  Double,
  Int32,
  Long,
  MaxKey,
  MinKey,
  ObjectId,
  serialize,
  Timestamp,
  type Document,
} from "bson";
import { decodeDocument, decodeHeld } from "../../src/embedded-mongo/bson/decode.ts";
import { holdNumbers } from "../../src/embedded-mongo/bson/numbers.ts";

/** The form every document had before: decoded with wrappers, then held. */
function heldByWalking(bytes: Uint8Array): Document {
  return holdNumbers(deserialize(bytes, { promoteValues: false, promoteBuffers: false, bsonRegExp: false }));
}

/** Whether decode.ts's decoder leaves the document to bson's. */
function leftToBson(bytes: Uint8Array): boolean {
  return decodeHeld(bytes) === undefined;
}

/** A repeatable stream of numbers in [0, 1). */
function numbers(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

/** A random value of the types commands carry, nested a few levels. */
function randomValue(next: () => number, depth: number): unknown {
  const pick = Math.floor(next() * (depth > 2 ? 14 : 17));
  switch (pick) {
    case 0:
      return Math.floor(next() * 2000) - 1000; // int32
    case 1:
      return next() * 1000; // a double with a fraction
    case 2:
      return new Double(Math.floor(next() * 100)); // an integral double of the int32 range
    case 3:
      return 2 ** 40 + Math.floor(next() * 100); // an integral double beyond int32
    case 4:
      return Long.fromNumber(Math.floor(next() * 1e6));
    case 5:
      return `s${next()}é`;
    case 6:
      return new Date(Math.floor(next() * 2e12));
    case 7:
      return next() < 0.5;
    case 8:
      return null;
    case 9:
      return new ObjectId();
    case 10:
      return new Binary(Buffer.from([1, 2, 3]), next() < 0.5 ? 0 : 4);
    case 11:
      return new Timestamp({ t: 5, i: 7 });
    case 12:
      return Decimal128.fromString("1.5");
    case 13:
      return next() < 0.5 ? new MinKey() : new MaxKey();
    case 14:
      return Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, depth + 1));
    case 15:
      return randomDocument(next, depth + 1);
    default:
      return /a.b/i;
  }
}

function randomDocument(next: () => number, depth: number): Document {
  const doc: Document = {};
  const fields = 1 + Math.floor(next() * 5);
  for (let f = 0; f < fields; f++) doc[`f${f}`] = randomValue(next, depth);
  return doc;
}

describe("embedded-mongo: decoding a command's document", () => {
  it("decodes numbers, strings, dates, ids and binaries itself, as bson's decoder and the walk did", () => {
    const bytes = serialize({
      n: 5,
      d: 2.5,
      big: 2 ** 40,
      long: Long.fromNumber(7),
      nested: { list: [1, 1.5, { x: 3 }], empty: {}, none: [] },
      s: "x",
      text: "ünïcode and a long string of more than twenty bytes",
      when: new Date(-5),
      id: new ObjectId(),
      bin: new Binary(Buffer.from([1, 2]), 0),
      uuid: new Binary(Buffer.alloc(16, 7), 4),
      ts: new Timestamp({ t: 1, i: 2 }),
      yes: true,
      no: null,
      dec: Decimal128.fromString("2.25"),
      min: new MinKey(),
      max: new MaxKey(),
      sym: new BSONSymbol("s"),
      i32: new Int32(4),
    });
    expect(leftToBson(bytes)).to.equal(false);
    const decoded = decodeDocument(bytes);
    expect(decoded).to.deep.equal(heldByWalking(bytes));
    expect(decoded.n).to.equal(5);
    expect(decoded.big).to.equal(2 ** 40);
    expect(decoded.long).to.be.instanceOf(Long);
    expect(decoded.sym).to.equal("s");
  });

  it("keeps an integral double of the int32 range a Double wherever it is, and -0 a number", () => {
    for (const doc of [{ d: new Double(3) }, { a: [1, { b: [new Double(-7)] }] }, { z: new Double(-0) }]) {
      const bytes = serialize(doc);
      expect(decodeDocument(bytes)).to.deep.equal(heldByWalking(bytes));
    }
    const decoded = decodeDocument(serialize({ a: [1, { b: [new Double(-7)] }], z: new Double(-0) }));
    expect(decoded.a[1].b[0]).to.be.instanceOf(Double);
    expect(decoded.a[0]).to.equal(1);
    expect(Object.is(decoded.z, -0)).to.equal(true);
  });

  it("takes a repeated short value from its cache only when its bytes are the same", () => {
    const long = "x".repeat(40);
    const docs = [
      { a: "Aa", b: "status", c: long },
      { a: "BB", b: "status", c: long, d: "é" },
      { a: "Aa", b: "BB", c: `${long}y`, d: "è" },
    ];
    for (const doc of docs) {
      const decoded = decodeDocument(serialize(doc));
      expect(decoded).to.deep.equal(doc);
    }
  });

  it("takes a repeated key from its cache only when its bytes are the same", () => {
    // "Aa" and "BB" have the same length and the same hash: only their bytes tell them apart.
    const first = decodeDocument(serialize({ Aa: 1, status: 2 }));
    const second = decodeDocument(serialize({ BB: 3, status: 4 }));
    const third = decodeDocument(serialize({ Aa: 5, BB: 6 }));
    expect(first).to.deep.equal({ Aa: 1, status: 2 });
    expect(Object.keys(second)).to.deep.equal(["BB", "status"]);
    expect(second).to.deep.equal({ BB: 3, status: 4 });
    expect(third).to.deep.equal({ Aa: 5, BB: 6 });
  });

  it("reads each key whatever the last document held at its place: shorter, longer, another, nested, after a document left to bson", () => {
    const docs: Document[] = [
      { status: 1, route: "/a", n: { status: 2, x: 1 } },
      { stat: 1, route: "/a", n: { status: 2 } },
      { status2: 1, routes: "/a" },
      { status: 1, "rout\u00e9": "/a", n: 3 },
      { status: 1, route: { $ref: "c", $id: 1 } },
      { route: 1, status: 2 },
      { status: 1, route: "/a", n: { status: 2, x: 1 } },
      { s: 1 },
      { status: 1, route: "/a", extra: true },
    ];
    for (const doc of [...docs, ...docs]) {
      const bytes = serialize(doc);
      expect(decodeDocument(bytes), JSON.stringify(doc)).to.deep.equal(heldByWalking(bytes));
    }
  });

  it("builds documents shaped as the one before with their own keys and values, whatever came between", () => {
    const withProto = (n: number): Document => Object.defineProperty({ a: n }, "__proto__", { value: n, enumerable: true });
    const docs: Document[] = [
      { a: 1, b: "x", c: [1] },
      { a: 2, b: "y", c: { d: 3 } },
      { a: 3, b: "z", c: null },
      // The second key changes, in a document left to bson: the next one, of the same keys, is not built as the first.
      { a: 4, x: /re/, c: 5 },
      { a: 6, x: 7, c: 8 },
      { a: 9, x: 10, c: 11 },
      { a: 12, x: 13 },
      { a: 14, x: 15, c: 16, d: 17 },
      withProto(18),
      withProto(19),
      { a: 20, b: "w", c: 21 },
      { a: 22, b: "v", c: 23 },
    ];
    for (const doc of docs) {
      const bytes = serialize(doc);
      const decoded = decodeDocument(bytes);
      expect(decoded, JSON.stringify(doc)).to.deep.equal(heldByWalking(bytes));
      expect(Object.keys(decoded)).to.deep.equal(Object.keys(doc));
      expect(Object.getPrototypeOf(decoded)).to.equal(Object.prototype);
    }
  });

  it("leaves DBRefs, codes, regular expressions and strings with a replacement character to bson, with the same answers", () => {
    const docs = [
      { ref: new DBRef("c", new ObjectId(), undefined, { n: 1 }), after: 1 },
      { code: new Code("function () {}", { n: 1 }) },
      { code: new Code("x") },
      { re: /a.b/i },
      { text: "a \uFFFD b" },
    ];
    for (const doc of docs) {
      const bytes = serialize(doc);
      expect(leftToBson(bytes), JSON.stringify(doc)).to.equal(true);
      expect(decodeDocument(bytes)).to.deep.equal(heldByWalking(bytes));
    }
  });

  it("answers the same as the walk for random documents of every type", () => {
    const next = numbers(42);
    let own = 0;
    for (let n = 0; n < 2000; n++) {
      const bytes = serialize(randomDocument(next, 0));
      if (!leftToBson(bytes)) own++;
      expect(decodeDocument(bytes), `document ${n}`).to.deep.equal(heldByWalking(bytes));
    }
    // Both decoders ran.
    expect(own).to.be.within(200, 1900);
  });

  it("fails on malformed bytes with bson's errors", () => {
    const bytes = serialize({ a: "text", b: { c: 1 }, d: [true] });
    const withByte = (at: number, byte: number) => {
      const copy = Buffer.from(bytes);
      copy[at] = byte;
      return copy;
    };
    const cases = [
      bytes.subarray(0, bytes.length - 1),
      Buffer.concat([bytes.subarray(0, 10), Buffer.from([0xff, 0xff]), bytes.subarray(12)]),
      withByte(bytes.length - 3, 7), // the boolean
      withByte(9, 0xc3), // inside the string: not UTF-8
      withByte(7, 0x40), // the string's length
      withByte(bytes.indexOf(0x03) + 3, 0x60), // the embedded document's length
    ];
    for (const malformed of cases) {
      let expected: unknown;
      try {
        heldByWalking(malformed);
      } catch (error) {
        expected = error;
      }
      expect(expected, "bson's decoder refuses it").to.be.instanceOf(Error);
      expect(() => decodeDocument(malformed)).to.throw((expected as Error).message);
    }
  });
});
