// The direct test of plain comparison filters must answer exactly what the query matcher answers: checked on a
// corpus of documents (missing fields, arrays, arrays of documents, mixed types) against generated filters.
import { expect } from "chai";
import type { Document } from "bson";
import { createQuery } from "../../src/embedded-mongo/matcher.ts";
import { compileSimpleFilter } from "../../src/embedded-mongo/simple-filter.ts";

const DOCUMENTS: Document[] = [
  {},
  { a: 1 },
  { a: 1.5, b: "x" },
  { a: "1", b: ["x", "y"] },
  { a: [1, 5, "z"], b: "y" },
  { a: [[1]], b: [] },
  { a: true, c: { d: 2 } },
  { a: new Date(1000), c: [{ d: 1 }, { d: 3 }, { e: 1 }] },
  { a: null, c: { d: [2, 4] } },
  { a: 3, c: [{ d: [5] }, 7] },
  { c: { d: "2" } },
];

const VALUES: unknown[] = [1, 1.5, 2, 3, 5, "1", "x", "y", "z", true, false, new Date(1000), new Date(5000)];
const PATHS = ["a", "b", "c.d", "c.e", "missing"];
const OPERATORS = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"];

/** A small deterministic generator, so that a failure can be reproduced. */
function* filters(): Generator<Document> {
  let seed = 7;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  for (let i = 0; i < 1500; i++) {
    const filter: Document = {};
    for (let f = 0; f <= next(2); f++) {
      const path = PATHS[next(PATHS.length)]!;
      const value = VALUES[next(VALUES.length)];
      if (next(3) === 0) {
        filter[path] = value;
        continue;
      }
      const op = OPERATORS[next(OPERATORS.length)]!;
      const arg = op === "$in" || op === "$nin" ? [value, VALUES[next(VALUES.length)]] : value;
      filter[path] = { ...(filter[path] !== null && typeof filter[path] === "object" ? filter[path] : {}), [op]: arg };
    }
    yield filter;
  }
}

describe("embedded-mongo: plain comparison filters tested directly", () => {
  it("answers what the query matcher answers, for every generated filter and document", () => {
    let compared = 0;
    for (const filter of filters()) {
      const direct = compileSimpleFilter(filter);
      expect(direct, JSON.stringify(filter)).to.be.a("function");
      const query = createQuery(filter);
      for (const doc of DOCUMENTS) {
        expect(direct!(doc), `${JSON.stringify(filter)} on ${JSON.stringify(doc)}`).to.equal(query.test(doc));
        compared++;
      }
    }
    expect(compared).to.equal(1500 * DOCUMENTS.length);
  });

  it("leaves every other filter to the query matcher", () => {
    for (const filter of [
      { a: null },
      { a: { $ne: null } },
      { a: /x/ },
      { a: { b: 1 } },
      { a: [1] },
      { "a.0": 1 },
      { $or: [{ a: 1 }] },
      { a: { $exists: true } },
      { a: { $in: [null] } },
      { a: { $not: { $gt: 1 } } },
      { a: { $in: 5 } },
      { a: {} },
      { a: Number.NaN },
    ] as Document[]) {
      expect(compileSimpleFilter(filter), JSON.stringify(filter)).to.equal(undefined);
    }
  });
});
