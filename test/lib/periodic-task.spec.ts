import { expect } from "chai";
import { PeriodicTask } from "../../src/lib/periodic-task.ts";

describe("PeriodicTask", () => {
  it("never overlaps runs: ticks during a slow run are skipped, and stop waits for the run going", async () => {
    let running = 0;
    let most = 0;
    let runs = 0;
    const task = new PeriodicTask(
      async () => {
        running++;
        most = Math.max(most, running);
        runs++;
        await new Promise((resolve) => setTimeout(resolve, 60));
        running--;
      },
      5,
      (error) => {
        throw error;
      },
    );
    task.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await task.stop();
    expect(most).to.equal(1);
    expect(runs).to.be.within(2, 4);
    expect(running).to.equal(0);
  });

  it("hands a failed run's error to onError and runs again at the next tick", async () => {
    const errors: unknown[] = [];
    let runs = 0;
    const task = new PeriodicTask(
      async () => {
        runs++;
        throw new Error(`run ${runs}`);
      },
      5,
      (error) => errors.push(error),
    );
    await task.runNow();
    await task.runNow();
    expect(errors.map((e) => (e as Error).message)).to.deep.equal(["run 1", "run 2"]);
  });
});
