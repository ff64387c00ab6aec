// `npm start` without MONGODB_URI: the embedded database is durable in SVC_DATA_DIR and a one-member replica set.
// A restart on the same directory finds the Default project, its users and keys, and prints the same working
// export line (the development credentials are kept in SVC_DATA_DIR, readable by their owner only); without that
// file, since only the keys' hashes are stored, the banner says how to get a key (its curl runs as printed).
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { MongoClient } from "mongodb";
import { compiledEntry, ROOT, startProcess, type RunningProcess } from "../support/processes.ts";

const run = promisify(execFile);

describe("npm start on the durable embedded database (SVC_DATA_DIR)", function () {
  // Three starts of the service, each compiling its TypeScript: minutes on a loaded 2-core machine.
  this.timeout(120_000);
  let dataDir = "";
  let service: RunningProcess | null = null;
  before(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), "svc-durable-start-"));
  });
  after(async () => {
    await service?.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function start(): Promise<{ banner: string; base: string; exportLine: string }> {
    const { running, match } = await startProcess(process.execPath, [compiledEntry("src/main.ts")], {
      env: {
        MONGODB_URI: undefined,
        SVC_DATA_DIR: dataDir,
        PORT: "0",
        GRPC_PORT: "0",
        LOG_LEVEL: "warn",
        SVC_ADMIN_TOKEN: undefined,
        SVC_SANDBOX_KEY: undefined,
        SVC_LIVE_KEY: undefined,
      },
      ready: /^export /,
      timeoutMs: 30_000,
    });
    service = running;
    const banner = running.output.join("\n");
    return { banner, base: /^REST {10}(http:\/\/\S+)\/v1/m.exec(banner)![1]!, exportLine: match.input! };
  }

  it("keeps users and the Default project across a restart, as a replica set, and says how to get a key", async () => {
    const first = await start();
    expect(first.banner).to.include(`data          ${dataDir} (SVC_DATA_DIR; kept across restarts; to reset: stop, then rm -rf it)`);
    const databaseUri = /^database {6}embedded MongoDB \(replica set rs0\) at (mongodb:\/\/\S+) /m.exec(first.banner)?.[1];
    expect(databaseUri, first.banner).to.be.a("string");
    const client = new MongoClient(databaseUri!);
    try {
      const hello = await client.db("admin").command({ hello: 1 });
      expect(hello.setName).to.equal("rs0");
    } finally {
      await client.close();
    }
    const projectId = /^project {7}Default \(([0-9a-f-]{36})\)$/m.exec(first.banner)![1]!;
    const sandboxKey = /SVC_SANDBOX_KEY=(svc_test_\w+)/.exec(first.exportLine)![1]!;
    const created = await fetch(`${first.base}/v1/users`, {
      method: "POST",
      headers: { authorization: `Bearer ${sandboxKey}`, "content-type": "application/json" },
      body: JSON.stringify({ phone: "+14155550177" }),
    });
    expect(created.status).to.equal(201);
    const user = (await created.json()) as { id: string };
    await service!.kill("SIGTERM");
    expect(service!.process.exitCode).to.equal(0);

    // Restarted twice: the development credentials kept in SVC_DATA_DIR give the same working export line (the
    // URLs aside: PORT=0 picks new ports), and they work.
    const withoutUrls = (line: string) => line.replace(/ SVC_URL=\S+ SVC_GRPC_URL=\S+$/, "");
    expect(first.exportLine).to.match(
      /^export SVC_ADMIN_TOKEN=\S+ SVC_SANDBOX_KEY=(svc_test_\w+) SVC_LIVE_KEY=svc_live_\w+ SVC_API_KEY=\1 SVC_URL=http:\/\/\S+ SVC_GRPC_URL=http:\/\/\S+$/,
    );
    for (let restart = 1; restart <= 2; restart++) {
      const again = await start();
      expect(again.banner).to.match(new RegExp(`^project {7}Default \\(${projectId}\\)$`, "m"));
      expect(withoutUrls(again.exportLine), `restart ${restart}`).to.equal(withoutUrls(first.exportLine));
      expect(again.banner).to.include(`credentials   ${path.join(dataDir, "credentials.json")}`);
      expect(statSync(path.join(dataDir, "credentials.json")).mode & 0o777).to.equal(0o600);
      const adminToken = /SVC_ADMIN_TOKEN=(\S+)/.exec(again.exportLine)![1]!;
      const listed = await fetch(`${again.base}/svc.admin.v1.AdminService/ListProjects`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
        body: "{}",
      });
      expect(listed.status).to.equal(200);
      const read = await fetch(`${again.base}/v1/users/${user.id}`, { headers: { authorization: `Bearer ${sandboxKey}` } });
      expect(read.status).to.equal(200);
      await service!.kill("SIGTERM");
      expect(service!.process.exitCode).to.equal(0);
    }

    // Without the credentials file (deleted), the keys are kept but their secrets are not known: the banner says how to get one.
    rmSync(path.join(dataDir, "credentials.json"));
    const third = await start();
    expect(third.banner).to.match(/^sandbox key {3}\(existing key kept; its secret is not stored\)/m);
    expect(third.banner).to.include("keys were kept from an earlier run");
    expect(third.exportLine).to.match(/^export SVC_ADMIN_TOKEN=\S+ SVC_URL=http:\/\/\S+ SVC_GRPC_URL=http:\/\/\S+$/);
    // The banner's own command, run as printed after its export line.
    const curl = third.banner.split("\n").find((line) => line.includes("CreateApiKey") && line.includes('"livemode": false'));
    expect(curl, third.banner).to.be.a("string");
    expect(curl).to.include(`"project_id": "${projectId}"`);
    const { stdout } = await run("bash", ["--norc", "--noprofile", "-c", `set -euo pipefail\n${third.exportLine}\n${curl!.trim()}`], {
      cwd: ROOT,
      env: { PATH: process.env.PATH },
    });
    const newKey = (JSON.parse(stdout) as { secret: string }).secret;
    expect(newKey).to.match(/^svc_test_\w+$/);
    // The old key still works (only its hash is stored, and that was kept), and so does the new one.
    for (const key of [sandboxKey, newKey]) {
      const read = await fetch(`${third.base}/v1/users/${user.id}`, { headers: { authorization: `Bearer ${key}` } });
      expect(read.status).to.equal(200);
    }
    await service!.kill("SIGTERM");
    expect(service!.process.exitCode).to.equal(0);
  });
});
