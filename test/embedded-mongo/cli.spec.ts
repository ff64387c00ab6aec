import { expect } from "chai";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { MongoClient } from "mongodb";
import { compiledEntry } from "../support/processes.ts";

describe("embedded-mongo: CLI (npm run mongo:embedded)", function () {
  this.timeout(20000);

  it("prints the URI once listening and exits on SIGTERM", async () => {
    const child = spawn(process.execPath, [compiledEntry("src/embedded-mongo/cli.ts"), "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      const firstLine = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout! }).once("line", resolve);
        child.once("exit", (code) => reject(new Error(`CLI exited early with ${code}`)));
      });
      expect(firstLine).to.match(/^mongodb:\/\/127\.0\.0\.1:\d+\/$/);
      const client = new MongoClient(firstLine);
      expect(await client.db("cli").command({ ping: 1 })).to.include({ ok: 1 });
      await client.close();
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      child.kill("SIGTERM");
      expect(await exited).to.equal(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });

  it("refuses an invalid port", async () => {
    const child = spawn(process.execPath, [compiledEntry("src/embedded-mongo/cli.ts"), "--port", "nope"], { stdio: "ignore" });
    const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
    expect(code).to.equal(2);
  });
});
