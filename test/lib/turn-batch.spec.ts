// Group commit per event-loop turn (src/lib/turn-batch.ts), the one batcher of the repositories, Agenda's commands,
// the delivery jobs' moves and (after a window) successful deliveries' outcomes; with oneAtATime, the requests made
// while a write is under way wait for it and go together into the next, so a stream of requests becomes few writes.
import { expect } from "chai";
import { TurnBatch, turnBatchedReads } from "../../src/lib/turn-batch.ts";

/** A write that records its batch and ends when the test says so. */
function gatedWriter() {
  const batches: number[][] = [];
  const gates: (() => void)[] = [];
  const write = async (items: number[]) => {
    batches.push(items);
    await new Promise<void>((resolve) => gates.push(resolve));
    return items.map((n) => n * 10);
  };
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  return { batches, gates, write, turn };
}

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

  it("writes each turn's requests together, a write per turn even while another is under way", async () => {
    const { batches, gates, write, turn } = gatedWriter();
    const batch = new TurnBatch<number, number>(write);
    const first = [batch.add(1), batch.add(2)];
    await turn();
    const second = [batch.add(3)];
    await turn();
    expect(batches).to.deep.equal([[1, 2], [3]]);
    for (const open of gates) open();
    expect(await Promise.all([...first, ...second])).to.deep.equal([10, 20, 30]);
  });

  it("with oneAtATime, holds the requests made during a write and sends them together once it ends", async () => {
    const { batches, gates, write, turn } = gatedWriter();
    const batch = new TurnBatch<number, number>(write, { oneAtATime: true });
    const first = batch.add(1);
    await turn();
    const waiting = [batch.add(2)];
    await turn();
    waiting.push(batch.add(3), batch.add(4));
    await turn();
    expect(batches, "nothing more while the first write is under way").to.deep.equal([[1]]);
    gates.shift()!();
    expect(await first).to.equal(10);
    await turn();
    expect(batches).to.deep.equal([[1], [2, 3, 4]]);
    gates.shift()!();
    expect(await Promise.all(waiting)).to.deep.equal([20, 30, 40]);
  });

  it("with maxItems and oneAtATime, writes at most that many at a time, in the order they were requested", async () => {
    const { batches, gates, write, turn } = gatedWriter();
    const batch = new TurnBatch<number, number>(write, { oneAtATime: true, maxItems: 2 });
    const first = batch.add(1);
    await turn();
    const waiting = [2, 3, 4, 5, 6].map((n) => batch.add(n));
    await turn();
    gates.shift()!();
    expect(await first).to.equal(10);
    await turn();
    expect(batches, "the rest waits for the write under way").to.deep.equal([[1], [2, 3]]);
    gates.shift()!();
    await turn();
    await turn();
    expect(batches).to.deep.equal([[1], [2, 3], [4, 5]]);
    gates.shift()!();
    await turn();
    await turn();
    gates.shift()!();
    expect(await Promise.all(waiting)).to.deep.equal([20, 30, 40, 50, 60]);
    expect(batches).to.deep.equal([[1], [2, 3], [4, 5], [6]]);
  });

  it("with maxItems alone, writes the requests of one turn in writes of at most that many, all at once", async () => {
    const { batches, gates, write, turn } = gatedWriter();
    const batch = new TurnBatch<number, number>(write, { maxItems: 2 });
    const results = [1, 2, 3, 4, 5].map((n) => batch.add(n));
    await turn();
    await turn();
    expect(batches).to.deep.equal([[1, 2], [3, 4], [5]]);
    for (const open of gates.splice(0)) open();
    expect(await Promise.all(results)).to.deep.equal([10, 20, 30, 40, 50]);
  });

  it("turnBatchedReads: the reads of one turn ask once for their distinct ids, and each gets its document or null", async () => {
    const asked: string[][] = [];
    const stored = new Map([
      ["a", { _id: "a", n: 1 }],
      ["b", { _id: "b", n: 2 }],
    ]);
    const byId = turnBatchedReads(async (ids) => {
      asked.push(ids);
      return ids.flatMap((id) => stored.get(id) ?? []);
    });
    expect(await Promise.all([byId("a"), byId("missing"), byId("a"), byId("b")])).to.deep.equal([
      { _id: "a", n: 1 },
      null,
      { _id: "a", n: 1 },
      { _id: "b", n: 2 },
    ]);
    expect(await byId("b")).to.deep.equal({ _id: "b", n: 2 });
    expect(asked).to.deep.equal([["a", "missing", "b"], ["b"]]);
  });

  it("with windowMs, waits that long after the first request for others; with maxItems, writes a full batch at once", async () => {
    const calls: number[][] = [];
    const batch = new TurnBatch<number>(
      async (items) => {
        calls.push(items);
        return items.map(() => undefined);
      },
      { windowMs: 30, maxItems: 3 },
    );
    const first = batch.add(1);
    await new Promise((resolve) => setTimeout(resolve, 10));
    const second = batch.add(2);
    expect(calls).to.deep.equal([]);
    await Promise.all([first, second]);
    expect(calls).to.deep.equal([[1, 2]]);
    await Promise.all([batch.add(3), batch.add(4), batch.add(5)]);
    expect(calls).to.deep.equal([
      [1, 2],
      [3, 4, 5],
    ]);
  });
});
