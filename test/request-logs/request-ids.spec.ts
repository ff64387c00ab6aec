// Request ids name the request log's entries: they sort by the time of their call (so the log's _id index grows
// at its end) and keep the contract's shape, `req_` and 24 letters and digits, with a random part.
import { expect } from "chai";
import { newRequestId } from "../../src/domain/ids.ts";

const REQUEST_ID = /^req_[A-Za-z0-9]{24}$/;

describe("request ids", () => {
  it("have the contract's shape at every time from the epoch on", () => {
    for (const at of [0, 1, 61, 62, Date.parse("2026-11-27T22:00:00Z"), Date.parse("8800-01-01T00:00:00Z")]) {
      expect(newRequestId(at)).to.match(REQUEST_ID);
    }
  });

  it("sort as the times of their calls do, to the millisecond", () => {
    const times = [0, 1, 9, 10, 35, 36, 61, 62, 3843, 3844, Date.parse("2026-01-01T00:00:00Z"), Date.parse("2026-11-27T22:00:00.001Z")];
    for (let i = 1; i < times.length; i++) {
      const [earlier, later] = [newRequestId(times[i - 1]!), newRequestId(times[i]!)];
      expect(earlier < later, `${earlier} before ${later}`).to.equal(true);
    }
  });

  it("differ within one millisecond", () => {
    const at = Date.now();
    const ids = new Set(Array.from({ length: 1000 }, () => newRequestId(at)));
    expect(ids.size).to.equal(1000);
  });
});
