// A mocha root hook: after the whole run, every process a test spawned and left running (a test that timed out
// while starting one) is killed, so that a failed test fails the run instead of keeping it from ever ending.
import { killUnfinishedProcesses } from "./processes.ts";

export const mochaHooks = {
  afterAll() {
    const killed = killUnfinishedProcesses();
    if (killed > 0) console.error(`killed ${killed} process(es) that tests left running`);
  },
};
