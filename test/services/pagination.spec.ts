// The shared list rules (src/services/pagination.ts) on a list held in memory, as a user's wallets are.
import { expect } from "chai";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { listParameters, pageInMemory } from "../../src/services/pagination.ts";
import { expectValidationError } from "../support/errors.ts";

// Newest first: w9 (created at second 9) down to w0.
const items = Array.from({ length: 10 }, (_, i) => ({ id: `w${9 - i}`, at: new Date((9 - i) * 1000) }));
const page = (request: Parameters<typeof listParameters>[0]) => {
  const result = pageInMemory(items, listParameters(request), (item) => item.at);
  return { ids: result.items.map((item) => item.id), hasMore: result.hasMore };
};
const at = (second: number) => timestampFromDate(new Date(second * 1000));

describe("services/pagination", () => {
  it("pages forwards with starting_after and backwards with ending_before, newest first both ways", () => {
    expect(page({ limit: 3 })).to.deep.equal({ ids: ["w9", "w8", "w7"], hasMore: true });
    expect(page({ limit: 3, startingAfter: "w7" })).to.deep.equal({ ids: ["w6", "w5", "w4"], hasMore: true });
    expect(page({ limit: 3, startingAfter: "w2" })).to.deep.equal({ ids: ["w1", "w0"], hasMore: false });
    expect(page({ limit: 3, endingBefore: "w4" })).to.deep.equal({ ids: ["w7", "w6", "w5"], hasMore: true });
    expect(page({ limit: 3, endingBefore: "w7" })).to.deep.equal({ ids: ["w9", "w8"], hasMore: false });
    expect(page({ limit: 3, endingBefore: "w9" })).to.deep.equal({ ids: [], hasMore: false });
  });

  it("applies every created bound, with the cursors", () => {
    expect(page({ limit: 10, created: { gt: at(6) } }).ids).to.deep.equal(["w9", "w8", "w7"]);
    expect(page({ limit: 10, created: { gte: at(6), lt: at(8) } }).ids).to.deep.equal(["w7", "w6"]);
    expect(page({ limit: 10, created: { lte: at(1) } }).ids).to.deep.equal(["w1", "w0"]);
    expect(page({ limit: 2, created: { lte: at(5) }, endingBefore: "w1" })).to.deep.equal({ ids: ["w3", "w2"], hasMore: true });
    expect(page({ limit: 2, created: { gte: at(3) }, startingAfter: "w5" })).to.deep.equal({ ids: ["w4", "w3"], hasMore: false });
  });

  it("refuses both cursors (naming ending_before) and a bad limit, before any lookup", () => {
    expectValidationError(() => listParameters({ startingAfter: "w1", endingBefore: "w2" }), "ending_before", /cannot be used together/);
    expectValidationError(() => listParameters({ limit: 0, startingAfter: "w1", endingBefore: "w2" }), "limit");
  });
});
