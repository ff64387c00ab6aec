// `npm start` as an operator runs it: SIGTERM or SIGINT to the npm process drains the service and frees its
// ports; SIGKILL of npm (which cannot pass anything on) leaves no orphan holding them either.
import { expect } from "chai";
import { freshDatabaseUri } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";
import { childPids, freePort, isAlive, portIsFree, startProcess, type RunningProcess } from "../support/processes.ts";

describe("npm start", function () {
  this.timeout(60_000);
  let npm: RunningProcess | null = null;
  let ports: number[] = [];

  async function npmStart(): Promise<RunningProcess> {
    ports = [await freePort(), await freePort()];
    const { running } = await startProcess("npm", ["start", "--silent"], {
      env: {
        MONGODB_URI: await freshDatabaseUri("svc_npm_start"),
        PORT: String(ports[0]),
        GRPC_PORT: String(ports[1]),
        SVC_ADMIN_TOKEN: "adm_npm_start_test_token",
        LOG_LEVEL: "warn",
      },
      ready: /Svc is listening/,
      timeoutMs: 30_000,
    });
    npm = running;
    const health = await fetch(`http://127.0.0.1:${ports[0]}/healthz`);
    expect(health.status).to.equal(200);
    return running;
  }

  async function expectPortsFree(): Promise<void> {
    for (const port of ports) expect(await portIsFree(port), `port ${port} is free`).to.equal(true);
  }

  afterEach(async () => {
    // A failed test must not leave a server behind: kill whatever of the tree is left.
    if (npm) for (const pid of childPids(npm.process.pid!)) if (isAlive(pid)) process.kill(pid, "SIGKILL");
    await npm?.kill("SIGKILL");
    npm = null;
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`drains and exits on ${signal} to the npm process, freeing both ports`, async () => {
      const running = await npmStart();
      const started = Date.now();
      running.process.kill(signal);
      await running.exited;
      expect(Date.now() - started, "time to exit").to.be.below(15_000);
      expect(running.process.exitCode, running.output.join("\n")).to.equal(0);
      await expectPortsFree();
    });
  }

  it("exits within seconds when npm is killed with SIGKILL, freeing both ports", async () => {
    const running = await npmStart();
    const [service] = childPids(running.process.pid!);
    expect(service, "the service process under npm").to.be.a("number");
    await running.kill("SIGKILL");
    await eventually(
      async () => isAlive(service!),
      (alive) => !alive,
      5000,
    );
    await expectPortsFree();
  });
});
