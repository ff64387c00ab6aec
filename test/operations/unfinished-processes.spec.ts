// The run's last hook kills what tests left running: a process a test started and never stopped (it timed out
// while starting it) would otherwise keep mocha, and CI, from ever ending.
import { expect } from "chai";
import { isAlive, killUnfinishedProcesses, startProcess } from "../support/processes.ts";

describe("test support: processes a test leaves running", () => {
  it("are killed by killUnfinishedProcesses, and only those", async () => {
    const stay = "console.log('ready'); setInterval(() => {}, 1000);";
    const { running: left } = await startProcess(process.execPath, ["-e", stay], { env: { SVC_DATA_DIR: "" }, ready: /^ready$/ });
    const { running: stopped } = await startProcess(process.execPath, ["-e", stay], { env: { SVC_DATA_DIR: "" }, ready: /^ready$/ });
    await stopped.kill();
    expect(isAlive(left.process.pid!)).to.equal(true);
    // At least this one (a test before may have left one too).
    expect(killUnfinishedProcesses()).to.be.at.least(1);
    await left.exited;
    expect(left.process.signalCode).to.equal("SIGKILL");
    expect(stopped.process.signalCode).to.equal("SIGTERM");
    expect(killUnfinishedProcesses()).to.equal(0);
  });

  it("kills the processes they started too (a service `npm start` runs is npm's grandchild)", async () => {
    // A parent that starts a child, prints the child's pid, and stays; the child stays too.
    const parent = `const { spawn } = require("node:child_process");
      const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
      console.log("child " + child.pid); setInterval(() => {}, 1000);`;
    const { running } = await startProcess(process.execPath, ["-e", parent], { env: { SVC_DATA_DIR: "" }, ready: /^child \d+$/ });
    const grandchild = Number(running.output.find((line) => line.startsWith("child "))!.split(" ")[1]);
    expect(isAlive(grandchild)).to.equal(true);
    expect(killUnfinishedProcesses()).to.be.at.least(1);
    await running.exited;
    const deadline = Date.now() + 5_000;
    while (isAlive(grandchild) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(isAlive(grandchild), "the grandchild outlived the kill").to.equal(false);
  });
});
