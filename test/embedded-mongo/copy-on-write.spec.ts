// Unit tests of the storage's copies (in process, no driver): a copy shares chunks with its original, and neither
// side ever sees the other's later writes, whatever order the writes come in.
import { expect } from "chai";
import type { Document } from "bson";
import { Collection } from "../../src/embedded-mongo/storage/collection.ts";
import { CollectionIndex } from "../../src/embedded-mongo/storage/collection-index.ts";
import { OrderedSet } from "../../src/embedded-mongo/storage/ordered-set.ts";
import { RecordMap } from "../../src/embedded-mongo/storage/record-map.ts";

/** A seeded generator, so a failure replays. */
function random(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

/** Random sets and deletes on a RecordMap and on a Map kept beside it as the reference. */
function churn(map: RecordMap<string>, reference: Map<number, string>, rand: () => number, steps: number, label: string): void {
  for (let i = 0; i < steps; i++) {
    const rid = 1 + Math.floor(rand() * 3000);
    if (rand() < 0.55) {
      map.set(rid, `${label}${i}`);
      reference.set(rid, `${label}${i}`);
    } else expect(map.delete(rid)).to.equal(reference.delete(rid));
  }
}

function inRidOrder(reference: Map<number, string>): [number, string][] {
  return [...reference].sort((a, b) => a[0] - b[0]);
}

describe("embedded-mongo: copy-on-write storage", () => {
  it("a record map answers as a Map in record id order, through copies written on both sides", () => {
    const rand = random(7);
    const original = new RecordMap<string>();
    const originalRef = new Map<number, string>();
    churn(original, originalRef, rand, 5000, "a");
    const copies: [RecordMap<string>, Map<number, string>][] = [];
    for (let round = 0; round < 4; round++) {
      const copy = original.copy();
      const copyRef = new Map(originalRef);
      copies.push([copy, copyRef]);
      churn(original, originalRef, rand, 2000, `o${round}-`);
      churn(copy, copyRef, rand, 2000, `c${round}-`);
    }
    for (const [map, reference] of [[original, originalRef] as const, ...copies]) {
      expect([...map]).to.deep.equal(inRidOrder(reference));
      expect(map.size).to.equal(reference.size);
      for (let rid = 0; rid <= 3001; rid++) expect(map.get(rid)).to.equal(reference.get(rid));
    }
  });

  it("a record map drops emptied chunks and takes records below its first chunk again", () => {
    const map = new RecordMap<string>();
    for (let rid = 1; rid <= 2000; rid++) map.set(rid, `d${rid}`);
    for (let rid = 1; rid <= 1990; rid++) map.delete(rid);
    expect([...map.keys()]).to.deep.equal([1991, 1992, 1993, 1994, 1995, 1996, 1997, 1998, 1999, 2000]);
    map.set(5, "back");
    expect([...map.keys()].slice(0, 2)).to.deep.equal([5, 1991]);
    for (const rid of [...map.keys()]) map.delete(rid);
    expect(map.size).to.equal(0);
    expect([...map]).to.deep.equal([]);
    map.set(700_000, "far");
    expect([...map]).to.deep.equal([[700_000, "far"]]);
  });

  it("a record map's iteration visits records stored during it, as a Map's does", () => {
    const map = new RecordMap<string>();
    for (let rid = 1; rid <= 600; rid++) map.set(rid, `d${rid}`);
    const seen: number[] = [];
    for (const [rid] of map) {
      seen.push(rid);
      if (rid === 3) map.copy(); // the original's chunks become shared: its next write replaces one
      if (rid === 4) map.delete(5);
      if (rid === 600) map.set(601, "late");
    }
    expect(seen.length).to.equal(600);
    expect(seen).to.not.include(5);
    expect(seen.at(-1)).to.equal(601);
  });

  it("an ordered set and its copy stay sorted and apart through random inserts and deletes on both", () => {
    const rand = random(11);
    const original = new OrderedSet<number>((a, b) => a - b);
    let originalRef: number[] = [];
    const step = (set: OrderedSet<number>, reference: number[]) => {
      const v = Math.floor(rand() * 4000);
      if (rand() < 0.6) {
        set.insert(v);
        reference.push(v);
      } else {
        const at = reference.indexOf(v);
        expect(set.delete(v)).to.equal(at >= 0);
        if (at >= 0) reference.splice(at, 1);
      }
    };
    for (let i = 0; i < 6000; i++) step(original, originalRef);
    const copy = new OrderedSet<number>((a, b) => a - b);
    copy.copyFrom(original);
    const copyRef = [...originalRef];
    for (let i = 0; i < 6000; i++) {
      step(original, originalRef);
      step(copy, copyRef);
    }
    originalRef = originalRef.sort((a, b) => a - b);
    expect([...original]).to.deep.equal(originalRef);
    expect([...copy]).to.deep.equal(copyRef.sort((a, b) => a - b));
    expect(copy.size).to.equal(copyRef.length);
  });

  it("a collection's copy keeps documents and every index apart from its original", () => {
    const coll = new Collection("db", "c");
    const email = new CollectionIndex({ v: 2, key: { email: 1 }, name: "email_1", unique: true });
    coll.addIndex(email);
    for (let i = 0; i < 1500; i++) coll.insert({ _id: i, email: `u${i}@x` });
    const copy = coll.copy();
    // The original changes a document's email and frees another; the copy does the opposite.
    const ridOf = (c: Collection, id: number) => c.idIndex.lookup([id])[0]!;
    coll.replace(ridOf(coll, 10), { _id: 10, email: "changed@x" });
    coll.remove(ridOf(coll, 20));
    coll.insert({ _id: 5000, email: "u20@x" });
    copy.replace(ridOf(copy, 20), { _id: 20, email: "copy@x" });
    copy.insert({ _id: 6000, email: "new@x" });
    const emails = (c: Collection) => {
      const index = c.index("email_1")!;
      return (id: number): string | undefined => {
        const doc = c.docs.get(ridOf(c, id));
        if (doc === undefined) return undefined;
        expect(index.lookup([doc.email])).to.deep.equal([ridOf(c, id)]);
        return doc.email as string;
      };
    };
    const inOriginal = emails(coll);
    const inCopy = emails(copy);
    expect([inOriginal(10), inOriginal(20), inOriginal(5000), inOriginal(6000)]).to.deep.equal(["changed@x", undefined, "u20@x", undefined]);
    expect([inCopy(10), inCopy(20), inCopy(5000), inCopy(6000)]).to.deep.equal(["u10@x", "copy@x", undefined, "new@x"]);
    expect(copy.index("email_1")!.lookup(["changed@x"])).to.deep.equal([]);
    expect(coll.index("email_1")!.lookup(["copy@x"])).to.deep.equal([]);
    expect(() => copy.insert({ _id: 7000, email: "u10@x" })).to.throw(/duplicate key/);
  });

  it("rewinding a copy puts back earlier versions, their index keys and their natural order", () => {
    const coll = new Collection("db", "c");
    coll.addIndex(new CollectionIndex({ v: 2, key: { email: 1 }, name: "email_1", unique: true }));
    const earlier: Document[] = [];
    for (let i = 0; i < 5; i++) earlier.push({ _id: i, email: `u${i}@x` });
    for (const doc of earlier) coll.insert(doc);
    const ridOf = (c: Collection, id: number) => c.idIndex.lookup([id])[0];
    // Since then: 1 and 2 swapped emails (through a third value), 3 was deleted, 9 inserted with 3's old email.
    coll.replace(ridOf(coll, 1)!, { _id: 1, email: "tmp@x" });
    coll.replace(ridOf(coll, 2)!, { _id: 2, email: "u1@x" });
    coll.replace(ridOf(coll, 1)!, { _id: 1, email: "u2@x" });
    coll.remove(ridOf(coll, 3)!);
    coll.insert({ _id: 9, email: "u3@x" });
    const copy = coll.copy();
    copy.rewind([
      { rid: ridOf(copy, 1), doc: earlier[1]! },
      { rid: ridOf(copy, 2), doc: earlier[2]! },
      { rid: undefined, doc: earlier[3]! },
      { rid: ridOf(copy, 9), doc: null },
    ]);
    expect([...copy.docs.values()].map((d) => d._id)).to.deep.equal([0, 1, 2, 4, 3]);
    for (const doc of earlier) expect(copy.index("email_1")!.lookup([doc.email])).to.deep.equal([ridOf(copy, doc._id)]);
    expect(copy.index("email_1")!.lookup(["tmp@x"])).to.deep.equal([]);
    // The live collection is untouched.
    expect([...coll.docs.values()].map((d) => [d._id, d.email])).to.deep.equal([
      [0, "u0@x"],
      [1, "u2@x"],
      [2, "u1@x"],
      [4, "u4@x"],
      [9, "u3@x"],
    ]);
  });
});
