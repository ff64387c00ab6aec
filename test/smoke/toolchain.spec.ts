import { expect } from "chai";

describe("toolchain", () => {
  it("runs TypeScript tests under mocha", () => {
    const sum: number = [1, 2, 3].reduce((a, b) => a + b, 0);
    expect(sum).to.equal(6);
  });
});
