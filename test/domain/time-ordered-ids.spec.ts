// Request ids (which name the request log's entries) and webhook delivery ids sort by the time they were made, so
// their collections' _id indexes grow at their end, and keep the contract's shape, a prefix and 24 letters and
// digits, with a random part.
import { expect } from "chai";
import { newDeliveryId, newRequestId } from "../../src/domain/ids.ts";

const KINDS = [
  { name: "request ids", make: newRequestId, shape: /^req_[A-Za-z0-9]{24}$/ },
  { name: "webhook delivery ids", make: newDeliveryId, shape: /^whd_[A-Za-z0-9]{24}$/ },
];

for (const { name, make, shape } of KINDS) {
  describe(name, () => {
    it("have the contract's shape at every time from the epoch on", () => {
      for (const at of [0, 1, 61, 62, Date.parse("2026-11-27T22:00:00Z"), Date.parse("8800-01-01T00:00:00Z")]) {
        expect(make(at)).to.match(shape);
      }
    });

    it("sort as the times they were made do, to the millisecond", () => {
      const times = [0, 1, 9, 10, 35, 36, 61, 62, 3843, 3844, Date.parse("2026-01-01T00:00:00Z"), Date.parse("2026-11-27T22:00:00.001Z")];
      for (let i = 1; i < times.length; i++) {
        const [earlier, later] = [make(times[i - 1]!), make(times[i]!)];
        expect(earlier < later, `${earlier} before ${later}`).to.equal(true);
      }
    });

    it("differ within one millisecond", () => {
      const at = Date.now();
      const ids = new Set(Array.from({ length: 1000 }, () => make(at)));
      expect(ids.size).to.equal(1000);
    });

    it("made now carry the current time", () => {
      const before = make(Date.now() - 1);
      const now = make();
      const after = make(Date.now() + 1);
      expect(before < now && now < after, `${before} < ${now} < ${after}`).to.equal(true);
    });
  });
}
