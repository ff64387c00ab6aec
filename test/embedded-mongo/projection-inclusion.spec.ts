// Plain inclusion projections are applied directly; they must keep exactly what the general projection (mingo's)
// keeps: checked on documents with nested objects, arrays of objects and of scalars, nested arrays and BSON values.
// In the document's order, as mongod writes them (mingo puts _id last).
import { expect } from "chai";
import { ObjectId, type Document } from "bson";
import { createQuery } from "../../src/embedded-mongo/query/matcher.ts";
import { compileProjection } from "../../src/embedded-mongo/query/projection.ts";

const DOCUMENTS: Document[] = [
  { _id: 1 },
  { _id: 2, a: 1, b: "x", c: { d: 1, e: 2 } },
  { _id: 3, c: [{ d: 1 }, { e: 2 }, 5, [{ d: 3 }, 4]], a: [1, 2] },
  { b: { c: { d: 1 } }, _id: new ObjectId("65a000000000000000000001"), a: null },
  { _id: 4, c: { d: { f: 1, g: 2 } }, z: new Date(0) },
  { _id: 5, c: "scalar", a: { b: [1, { c: 2 }] } },
  { _id: 6, c: {} },
];

const SPECS: Document[] = [
  { a: 1 },
  { a: 1, _id: 0 },
  { b: true, a: 1 },
  { "c.d": 1 },
  { "c.d": 1, _id: 0 },
  { "c.d.f": 1, a: 1 },
  { "a.b": 1 },
  { "a.b.c": 1, z: 1 },
  { missing: 1 },
  { "c.e": 1, "c.d": 1 },
  { _id: 1, b: 1 },
  { _id: 1 },
  { _id: true },
];

describe("embedded-mongo: plain inclusion projections applied directly", () => {
  it("keep what the general projection keeps, in the document's order", () => {
    for (const spec of SPECS) {
      const project = compileProjection(spec)!;
      for (const doc of DOCUMENTS) {
        const general = createQuery({}).find([doc], spec).all()[0];
        const direct = project(doc);
        expect(direct, `${JSON.stringify(spec)} on ${JSON.stringify(doc)}`).to.deep.equal(general);
        const documentOrder = Object.keys(doc).filter((key) => key in (general as Document));
        expect(Object.keys(direct), `order of ${JSON.stringify(spec)} on ${JSON.stringify(doc)}`).to.deep.equal(documentOrder);
      }
    }
  });
});
