// The ordered set under index entries keeps its order whatever the pattern of inserts: keys growing within
// ranges that other keys follow (a tenant's time-ordered keys), appended between chunks and cut just after the new
// entry; keys past the end, or just before it; keys shrinking within ranges; random keys; with deletes and copies
// between them.
import { expect } from "chai";
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
