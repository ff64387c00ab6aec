// A mocha root hook: after the whole run (in a parallel run, after each file), every process a test spawned and left
// running (a test that timed out while starting one) is killed, so that a failed test fails the run instead of
// keeping it from ever ending.
import { killUnfinishedProcesses } from "./processes.ts";

// A parallel run's worker is asked to exit once the run is over, and sent SIGTERM if it has not within a second; the
// coverage c8 collects is written while the process exits, which takes longer than that for a worker that loaded the
// service, so SIGTERM must let that exit finish rather than end the process without it.
if (process.env.MOCHA_WORKER_ID !== undefined) process.on("SIGTERM", () => process.exit(0));

export const mochaHooks = {
  afterAll() {
    const killed = killUnfinishedProcesses();
    if (killed > 0) console.error(`killed ${killed} process(es) that tests left running`);
  },
};
