import { expect } from "chai";
import { CHANGED, compareAndSet, MAX_COMPARE_AND_SET_ATTEMPTS, TooManyConcurrentChanges } from "../../src/lib/compare-and-set.ts";

/** A stored counter that another writer bumps `interference` times, each between one of our reads and its write. */
function contendedCounter(interference: number) {
  let value = 0;
  let reads = 0;
  let writes = 0;
  let left = interference;
  return {
    get reads() {
      return reads;
    },
    get writes() {
      return writes;
    },
    get value() {
      return value;
    },
    read: () => {
      reads++;
      return value;
    },
    /** Sets `next` if the value is still `seen`; answers whether it did. */
    async setIf(seen: number, next: number): Promise<boolean> {
      writes++;
      if (left > 0) {
        left--;
        value++;
      }
      if (value !== seen) return false;
      value = next;
      return true;
    },
  };
}

describe("compareAndSet", () => {
  it("reads again after a conflict and answers what the write that applied answers", async () => {
    const counter = contendedCounter(1);
    const seenAttempts: number[] = [];
    const result = await compareAndSet(
      "counter",
      async () => counter.read(),
      async (seen, attempt) => {
        seenAttempts.push(attempt);
        return (await counter.setIf(seen, seen + 10)) ? `set from ${seen}` : CHANGED;
      },
    );
    expect(result).to.equal("set from 1");
    expect(counter.value).to.equal(11);
    expect(seenAttempts).to.deep.equal([0, 1]);
    expect(counter.reads).to.equal(2);
  });

  it("throws TooManyConcurrentChanges, naming the operation, when every attempt meets a change", async () => {
    const counter = contendedCounter(Number.POSITIVE_INFINITY);
    const outcome = await compareAndSet(
      "counter of test",
      () => counter.read(),
      async (seen) => ((await counter.setIf(seen, seen + 10)) ? seen : CHANGED),
      5,
    ).catch((error: unknown) => error);
    expect(outcome).to.be.instanceOf(TooManyConcurrentChanges);
    expect((outcome as Error).message).to.equal("counter of test: changed concurrently in each of 5 attempts; gave up");
    expect(counter.writes).to.equal(5);
  });

  it("gives up after the default bound", async () => {
    const counter = contendedCounter(Number.POSITIVE_INFINITY);
    const outcome = await compareAndSet("counter", counter.read, async (seen) => ((await counter.setIf(seen, 0)) ? seen : CHANGED)).catch(
      (error: unknown) => error,
    );
    expect(outcome).to.be.instanceOf(TooManyConcurrentChanges);
    expect(counter.writes).to.equal(MAX_COMPARE_AND_SET_ATTEMPTS);
  });

  it("hands the first attempt a state the caller already holds, and lets a refusal end the loop", async () => {
    const reads: number[] = [];
    const outcome = await compareAndSet(
      "refusal",
      (attempt) => {
        reads.push(attempt);
        return attempt === 0 ? "held" : "fresh";
      },
      (state) => {
        if (state === "fresh") throw new RangeError("refused");
        return CHANGED;
      },
    ).catch((error: unknown) => error);
    expect(outcome).to.be.instanceOf(RangeError);
    expect(reads).to.deep.equal([0, 1]);
  });
});
