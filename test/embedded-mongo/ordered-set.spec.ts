// The ordered set under index entries keeps its order whatever the pattern of inserts: keys growing within
// ranges that other keys follow (a tenant's time-ordered keys), appended between chunks and cut just after the new
// entry; keys past the end, or just before it; keys shrinking within ranges; random keys; with deletes and copies
// between them. An index's entries are searched by their ranks (a string key's leading characters) where those
// tell, and stay in the order of the keys' comparison whatever the strings hold.
import { expect } from "chai";
import { compareValues } from "../../src/embedded-mongo/query/bson-order.ts";
import { CollectionIndex, entryRid } from "../../src/embedded-mongo/storage/collection-index.ts";
import { OrderedSet } from "../../src/embedded-mongo/storage/ordered-set.ts";

type Entry = [range: number, n: number];
const compare = (a: Entry, b: Entry) => a[0] - b[0] || a[1] - b[1];

/** A repeatable stream of numbers in [0, 1). */
function numbers(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

function expectOrder(set: OrderedSet<Entry>, expected: Entry[]): void {
  const sorted = [...expected].sort(compare);
  expect([...set]).to.deep.equal(sorted);
  expect(set.size).to.equal(sorted.length);
  // Seeks land on each entry (they search among the chunks by each chunk's last entry, kept beside them).
  for (let i = 0; i < sorted.length; i += 97) {
    const entry = sorted[i]!;
    expect(set.at(set.seek((e) => compare(e, entry) < 0))).to.deep.equal(entry);
  }
}

describe("embedded-mongo: the ordered set of index entries", () => {
  for (const [pattern, next] of [
    ["growing keys in 40 ranges", (i: number) => [(i * 7) % 40, i] as Entry],
    ["shrinking keys in 40 ranges", (i: number) => [(i * 7) % 40, -i] as Entry],
    ["growing keys in one range", (i: number) => [0, i] as Entry],
    // Time-ordered ids within a millisecond: each new key near the end, before some of the last ones.
    ["keys growing with ties broken out of order", (i: number) => [0, i * 10 + ((i * 37) % 50)] as Entry],
  ] as const) {
    it(`keeps ${pattern} in order, with random keys, deletes and a copy among them`, () => {
      const random = numbers(7);
      const set = new OrderedSet<Entry>(compare);
      const held: Entry[] = [];
      for (let i = 0; i < 20_000; i++) {
        const entry = i % 5 === 4 ? ([Math.floor(random() * 40), 1e6 + i] as Entry) : next(i);
        set.insert(entry);
        held.push(entry);
        if (i % 11 === 10) {
          const [gone] = held.splice(Math.floor(random() * held.length), 1);
          expect(set.delete(gone!)).to.equal(true);
        }
      }
      expectOrder(set, held);
      const copy = new OrderedSet<Entry>(compare);
      copy.copyFrom(set);
      for (let i = 20_000; i < 25_000; i++) copy.insert(next(i));
      expectOrder(set, held);
      const copied = [...held, ...Array.from({ length: 5_000 }, (_, k) => next(20_000 + k))];
      expectOrder(copy, copied);
      // Most entries deleted, chunks emptied and ends removed, with inserts among the deletes.
      for (let i = 0; i < 20_000; i++) {
        const [gone] = copied.splice(Math.floor(random() * copied.length), 1);
        expect(copy.delete(gone!)).to.equal(true);
        if (i % 50 === 0) {
          const entry = [Math.floor(random() * 40), 2e6 + i] as Entry;
          copy.insert(entry);
          copied.push(entry);
        }
      }
      expectOrder(copy, copied);
      expectOrder(set, held);
    });
  }
});

describe("embedded-mongo: an index's entries searched by their ranks", () => {
  // Code units around the rank's limits: NUL, the last ASCII ones (126, 127), the first beyond, a surrogate, the largest.
  const units = ["\0", "a", "b", "z", "~", "\u007f", "\u0080", "é", "\ud83d", "\uffff"];
  function key(random: () => number): unknown {
    const kind = random();
    if (kind < 0.1) return Math.floor(random() * 10);
    if (kind < 0.15) return null;
    if (kind < 0.2) return new Date(Math.floor(random() * 10));
    // Up to 9 code units: past the seven a rank holds, with long shared beginnings (two of the units most of the time).
    const length = Math.floor(random() * 10);
    let text = "";
    for (let i = 0; i < length; i++) text += units[Math.floor(random() * (random() < 0.7 ? 2 : units.length))];
    return text;
  }

  for (const direction of [1, -1] as const) {
    it(`keeps strings, numbers, dates and nulls in the keys' order, ${direction === 1 ? "ascending" : "descending"}, through inserts and deletes`, () => {
      const random = numbers(11);
      const index = new CollectionIndex({ v: 2, key: { k: direction, n: 1 }, name: "k_n" });
      const held: { key: unknown[]; rid: number }[] = [];
      for (let rid = 1; rid <= 6_000; rid++) {
        const entry = { key: [key(random), rid % 3], rid };
        index.add([entry.key], rid);
        held.push(entry);
        if (rid % 7 === 0) {
          const [gone] = held.splice(Math.floor(random() * held.length), 1);
          index.remove([gone!.key], gone!.rid);
        }
      }
      // A copy shares the chunks and their ranks until either side changes one: each side inserts on its own.
      const copy = index.clone();
      const copied = [...held];
      for (const [target, entries, first] of [
        [copy, copied, 10_000],
        [index, held, 20_000],
      ] as const) {
        for (let rid = first; rid < first + 2_000; rid++) {
          const entry = { key: [key(random), rid % 3], rid };
          target.add([entry.key], rid);
          entries.push(entry);
        }
      }
      const order = (a: { key: unknown[]; rid: number }, b: { key: unknown[]; rid: number }) =>
        direction * compareValues(a.key[0], b.key[0]) || compareValues(a.key[1], b.key[1]) || a.rid - b.rid;
      expect([...index.entries].map(entryRid)).to.deep.equal([...held].sort(order).map((e) => e.rid));
      expect([...copy.entries].map(entryRid)).to.deep.equal([...copied].sort(order).map((e) => e.rid));
      for (const entry of held.slice(0, 200)) expect(index.lookup(entry.key)).to.include(entry.rid);
    });
  }
});
