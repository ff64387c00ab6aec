// An attempt's headers as a delivery record stores them: one "name: value" line each, read back as they were; the
// name and value pairs of records written before read the same.
import { expect } from "chai";
import { headersOf, storedHeaders } from "../../src/store/webhook-delivery-repository.ts";

describe("store: an attempt's stored headers", () => {
  it("reads back every header as it was: values holding ': ', empty values, a name that is an object's key", () => {
    // As a response's headers come: an own property named "__proto__" among them.
    const sent: Record<string, string> = JSON.parse(
      '{"Content-Type": "application/json", "location": "https://a.example/x?y=1: z", "x-empty": "", "__proto__": "p", "Svc-Delivery-Attempt": "1"}',
    );
    const block = storedHeaders(sent);
    expect(block).to.equal(
      "Content-Type: application/json\nlocation: https://a.example/x?y=1: z\nx-empty: \n__proto__: p\nSvc-Delivery-Attempt: 1\n",
    );
    expect(headersOf(block)).to.deep.equal(sent);
    expect(Object.keys(headersOf(block))).to.deep.equal(Object.keys(sent));
    expect(headersOf(storedHeaders({}))).to.deep.equal({});
  });

  it("keeps a line break out of a value, which would otherwise read back as a header of its own", () => {
    expect(headersOf(storedHeaders({ a: "one\r\nb: two" }))).to.deep.equal({ a: "one  b: two" });
  });

  it("reads the name and value pairs of a record written before", () => {
    expect(
      headersOf([
        { name: "a.b", value: "1" },
        { name: "$c", value: "2" },
      ]),
    ).to.deep.equal({ "a.b": "1", $c: "2" });
  });
});
