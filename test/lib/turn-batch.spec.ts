// Group commit per event-loop turn (src/lib/turn-batch.ts), the one batcher of the repositories, Agenda's commands
// and the delivery jobs' moves.
import { expect } from "chai";
import { TurnBatch } from "../../src/lib/turn-batch.ts";

describe("TurnBatch", () => {
  it("writes the items added in one turn with one call, and those of a later turn with another", async () => {
    const calls: number[][] = [];
    const batch = new TurnBatch<number, number>(async (items) => {
      calls.push(items);
      return items.map((item) => item * 10);
    });
    expect(await Promise.all([batch.add(1), batch.add(2), batch.add(3)])).to.deep.equal([10, 20, 30]);
    expect(await batch.add(4)).to.equal(40);
    expect(calls).to.deep.equal([[1, 2, 3], [4]]);
  });

  it("fails only the item whose answer is an Error", async () => {
    const batch = new TurnBatch<number, number>(async (items) => items.map((item) => (item === 2 ? new Error("two refused") : item)));
    const results = await Promise.allSettled([batch.add(1), batch.add(2), batch.add(3)]);
    expect(results.map((r) => r.status)).to.deep.equal(["fulfilled", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason.message).to.equal("two refused");
  });

  it("fails every item of a batch whose write fails, and still writes the next batch", async () => {
    let fail = true;
    const batch = new TurnBatch<number>(async (items) => {
      if (fail) throw new Error("database down");
      return items.map(() => undefined);
    });
    const results = await Promise.allSettled([batch.add(1), batch.add(2)]);
    expect(results.map((r) => (r.status === "rejected" ? r.reason.message : "ok"))).to.deep.equal(["database down", "database down"]);
    fail = false;
    await batch.add(3);
  });
});
