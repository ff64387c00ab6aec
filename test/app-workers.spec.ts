// The order in which a process starts and stops its workers, and the one deadline they share.
import { expect } from "chai";
import { remainingMs, startInOrder, stopInReverse, together, type Worker, worker } from "../src/app-workers.ts";

function recorded(name: string, log: string[], stopMs = 0): Worker {
  return {
    start: async () => {
      log.push(`start ${name}`);
    },
    stop: async () => {
      log.push(`stop ${name}`);
      await new Promise((resolve) => setTimeout(resolve, stopMs));
      log.push(`stopped ${name}`);
    },
  };
}

describe("app workers", () => {
  it("start in the list's order and stop in reverse, each stop awaited before the next", async () => {
    const log: string[] = [];
    const workers = [recorded("a", log, 5), recorded("b", log, 5), recorded("c", log, 5)];
    await startInOrder(workers);
    await stopInReverse(workers, performance.now() + 1000);
    expect(log).to.deep.equal(["start a", "start b", "start c", "stop c", "stopped c", "stop b", "stopped b", "stop a", "stopped a"]);
  });

  it("stops workers together at the same time, with the same deadline", async () => {
    const log: string[] = [];
    const deadlines: number[] = [];
    const seen = (name: string): Worker => ({
      ...recorded(name, log, 5),
      stop: async (deadline) => {
        deadlines.push(deadline);
        log.push(`stop ${name}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        log.push(`stopped ${name}`);
      },
    });
    const deadline = performance.now() + 1000;
    await stopInReverse([together(seen("jobs"), seen("deliveries"))], deadline);
    expect(log.slice(0, 2)).to.deep.equal(["stop jobs", "stop deliveries"]);
    expect(deadlines).to.deep.equal([deadline, deadline]);
  });

  it("a worker with only a start stops at once, and one with only a stop starts at once", async () => {
    const log: string[] = [];
    const onlyStart = worker({ start: async () => void log.push("started") });
    const onlyStop = worker({ stop: async () => void log.push("stopped") });
    await startInOrder([onlyStart, onlyStop]);
    await stopInReverse([onlyStart, onlyStop], performance.now());
    expect(log).to.deep.equal(["started", "stopped"]);
  });

  it("counts the time left until the deadline, never below zero", () => {
    expect(remainingMs(performance.now() - 50)).to.equal(0);
    expect(remainingMs(performance.now() + 10_000)).to.be.within(9000, 10_000);
  });
});
