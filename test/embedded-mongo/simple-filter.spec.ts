// The direct test of plain comparison filters must answer exactly what the query matcher answers: checked on a
// corpus of documents (missing fields, arrays, arrays of documents, mixed types) against generated filters.
import { expect } from "chai";
import { type Document, ObjectId } from "bson";
import { createQuery } from "../../src/embedded-mongo/query/matcher.ts";
import { compileSimpleFilter } from "../../src/embedded-mongo/query/simple-filter.ts";

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
  { a: new ObjectId("64b000000000000000000001"), b: [new ObjectId("64b000000000000000000002"), "x"] },
];

// ObjectIds as separate instances from the documents' own, as a command's values are.
const VALUES: unknown[] = [
  1,
  1.5,
  2,
  3,
  5,
  "1",
  "x",
  "y",
  "z",
  true,
  false,
  new Date(1000),
  new Date(5000),
  new ObjectId("64b000000000000000000001"),
  new ObjectId("64b000000000000000000002"),
];
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
      { "c.d": null },
      { "c.d": { $eq: null } },
      { a: { $ne: null } },
      { a: /x/ },
      { a: { b: 1 } },
      { a: [1] },
      { "a.0": 1 },
      { $or: [] },
      { $or: { a: 1 } },
      { $or: [{ a: /x/ }] },
      { $and: [{ a: 1 }, { "c.d": null }] },
      { $nor: [{ a: 1 }] },
      { a: { $exists: true } },
      { a: { $in: [null] } },
      { a: { $not: { $gt: 1 } } },
      { a: { $in: 5 } },
      { a: {} },
      { a: Number.NaN },
      { "c.d": { $type: "string" } },
      { a: { $type: "number" } },
      { a: { $type: "int" } },
      { a: { $type: "array" } },
      { a: { $type: "null" } },
      { a: { $type: [] } },
      { a: { $type: ["string", "double"] } },
    ] as Document[]) {
      expect(compileSimpleFilter(filter), JSON.stringify(filter)).to.equal(undefined);
    }
  });

  it("answers what the query matcher answers for $or, $and and equality with null on a top-level field", () => {
    const documents = [...DOCUMENTS, { a: [null, 2] }, { a: [] }, { a: [[null]] }, { a: undefined, b: "x" }, { b: null }, { a: [{ b: 1 }] }];
    let seed = 11;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const leaf = (): Document => {
      const path = ["a", "b", "c.d", "missing"][next(4)]!;
      const value = [null, 1, 2, "x", true, new Date(1000)][next(6)];
      if (value === null && path.includes(".")) return { a: null };
      switch (next(4)) {
        case 0:
          return { [path]: value };
        case 1:
          return { [path]: { $eq: value } };
        case 2:
          return value === null ? { [path]: null } : { [path]: { $lte: value } };
        default:
          return value === null ? { [path]: { $eq: null } } : { [path]: { $ne: value } };
      }
    };
    const clause = (depth: number): Document => {
      const kind = next(depth > 1 ? 2 : 4);
      if (kind < 2) return { ...leaf(), ...(next(2) ? leaf() : {}) };
      const op = kind === 2 ? "$or" : "$and";
      return { [op]: Array.from({ length: 1 + next(3) }, () => clause(depth + 1)), ...(next(2) ? leaf() : {}) };
    };
    for (let i = 0; i < 1000; i++) {
      const filter = clause(0);
      const direct = compileSimpleFilter(filter);
      expect(direct, JSON.stringify(filter)).to.be.a("function");
      const query = createQuery(filter);
      for (const doc of documents) expect(direct!(doc), `${JSON.stringify(filter)} on ${JSON.stringify(doc)}`).to.equal(query.test(doc));
    }
    // Agenda's due-job query.
    const due = {
      name: "j",
      disabled: { $ne: true },
      $or: [{ lockedAt: { $eq: null }, nextRunAt: { $lte: new Date(5000) } }, { lockedAt: { $lte: new Date(1000) } }],
    };
    const direct = compileSimpleFilter(due)!;
    for (const doc of [
      { name: "j", nextRunAt: new Date(4000) },
      { name: "j", nextRunAt: new Date(4000), lockedAt: null, disabled: null },
      { name: "j", nextRunAt: new Date(6000), lockedAt: null },
      { name: "j", nextRunAt: new Date(4000), lockedAt: new Date(2000) },
      { name: "j", nextRunAt: null, lockedAt: new Date(500) },
      { name: "j", nextRunAt: new Date(4000), lockedAt: null, disabled: true },
      { name: "k", nextRunAt: new Date(4000), lockedAt: null },
    ] as Document[]) {
      expect(direct(doc), JSON.stringify(doc)).to.equal(createQuery(due).test(doc));
    }
  });

  // A partial index's usual filter: `{field: {$type: "string"}}` (an error code or Idempotency-Key where set).
  it("answers what the query matcher answers for $type of a top-level field with a string, bool, date or objectId type", () => {
    const documents = [
      ...DOCUMENTS,
      { a: [null, "x"] },
      { a: [] },
      { a: [["x"]] },
      { a: undefined, b: "x" },
      { a: { b: "x" } },
      { a: [{ b: "x" }, false] },
      { a: [new Date(0)] },
      { a: new Date(Number.NaN) },
      { a: "" },
    ];
    const types = ["string", 2, "bool", 8, "date", 9, "objectId", 7];
    let checked = 0;
    for (const path of ["a", "b", "c", "missing"]) {
      for (const type of [...types, ["string", "bool"], [9, "objectId"], ["date"]]) {
        for (const filter of [
          { [path]: { $type: type } },
          { [path]: { $type: type, $ne: "x" } },
          { $or: [{ [path]: { $type: type } }, { b: "y" }] },
        ]) {
          const direct = compileSimpleFilter(filter);
          expect(direct, JSON.stringify(filter)).to.be.a("function");
          const query = createQuery(filter);
          for (const doc of documents) {
            expect(direct!(doc), `${JSON.stringify(filter)} on ${JSON.stringify(doc)}`).to.equal(query.test(doc));
            checked++;
          }
        }
      }
    }
    expect(checked).to.equal(4 * 11 * 3 * documents.length);
  });
});
