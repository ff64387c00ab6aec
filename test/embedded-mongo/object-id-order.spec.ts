// ObjectIds compare in the order of their twelve bytes, as mongod orders them, whatever their bytes hold (high
// bits set in any of the three-byte parts bson keeps them as), and equal ones compare equal.
import { expect } from "chai";
import { ObjectId } from "bson";
import { compareValues } from "../../src/embedded-mongo/query/bson-order.ts";

/** ObjectIds whose bytes differ in each position, with low and high values there. */
function ids(): ObjectId[] {
  const made: ObjectId[] = [];
  for (let position = 0; position < 12; position++) {
    for (const value of [0x00, 0x01, 0x7f, 0x80, 0xff]) {
      const bytes = new Uint8Array(12).fill(0x80);
      bytes[position] = value;
      made.push(new ObjectId(bytes));
    }
  }
  return made;
}

describe("embedded-mongo: the order of ObjectIds", () => {
  it("compares ObjectIds as their bytes do, and equal ones as equal", () => {
    const all = ids();
    const sign = (n: number) => Math.sign(n);
    for (const a of all) {
      for (const b of all) {
        const byBytes = a.toHexString() < b.toHexString() ? -1 : a.toHexString() > b.toHexString() ? 1 : 0;
        expect(sign(compareValues(a, b)), `${a.toHexString()} against ${b.toHexString()}`).to.equal(byBytes);
      }
    }
    expect(compareValues(new ObjectId("65f0a1b2c3d4e5f601234567"), new ObjectId("65f0a1b2c3d4e5f601234567"))).to.equal(0);
  });
});
