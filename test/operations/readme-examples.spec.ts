// The README's "Trying it" examples run as written after pasting the `export` line `src/main.ts` prints: the
// banner names the organization, project and key ids, every curl of the section gets a 2xx and every buf curl
// succeeds, on the ports the service took (the export line's SVC_URL and SVC_GRPC_URL); and the same line is all
// "Developing against Svc" needs before `svc trigger`.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { expect } from "chai";
import { freshDatabaseUri } from "../support/database.ts";
import { compiledEntry, ROOT, startProcess, type RunningProcess } from "../support/processes.ts";

const run = promisify(execFile);

function tryingItBlocks(): string[] {
  const readme = readFileSync(`${ROOT}/README.md`, "utf8");
  const start = readme.indexOf("## Trying it");
  // The section ends at the next heading: later sections hold commands that run until stopped (`svc listen`).
  const section = readme.slice(start, readme.indexOf("\n## ", start));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
}

describe("README examples", function () {
  this.timeout(60_000);
  let service: RunningProcess | null = null;
  after(async () => {
    await service?.kill("SIGTERM");
  });

  it("run as written with the banner's export line: every curl answers 2xx", async () => {
    const { running } = await startProcess(process.execPath, [compiledEntry("src/main.ts")], {
      env: {
        MONGODB_URI: await freshDatabaseUri("svc_readme"),
        SVC_BOOTSTRAP: "1",
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
    const port = /REST {10}http:\/\/127\.0\.0\.1:(\d+)\/v1/.exec(banner)![1]!;
    const grpcPort = /^gRPC +127\.0\.0\.1:(\d+)/m.exec(banner)![1]!;
    expect(banner).to.match(/^organization {2}Default \([0-9a-f-]{36}\)$/m);
    expect(banner).to.match(/^project {7}Default \([0-9a-f-]{36}\)$/m);
    expect(banner).to.match(/^sandbox key {3}svc_test_\w+ {3}id key_\w+$/m);
    expect(banner).to.match(/^live key {6}svc_live_\w+ {3}id key_\w+$/m);
    const exportLine = running.output.find((line) => line.startsWith("export "))!;
    expect(exportLine).to.equal(
      `export SVC_ADMIN_TOKEN=${/SVC_ADMIN_TOKEN=(\S+)/.exec(exportLine)![1]} SVC_SANDBOX_KEY=${/svc_test_\w+/.exec(banner)![0]} ` +
        `SVC_LIVE_KEY=${/svc_live_\w+/.exec(banner)![0]} SVC_API_KEY=${/svc_test_\w+/.exec(banner)![0]} ` +
        `SVC_URL=http://127.0.0.1:${port} SVC_GRPC_URL=http://127.0.0.1:${grpcPort}`,
    );
    expect(banner).to.include(`dashboard     http://127.0.0.1:${port}/dashboard`);
    expect(banner).to.match(/^admin token {3}\S+ {3}\(new for this run: set SVC_ADMIN_TOKEN to keep one\)$/m);

    const blocks = tryingItBlocks();
    expect(blocks.length).to.be.at.least(3);
    // The examples name the service by the exported addresses, so they run on whatever ports it took.
    expect(blocks.join("\n")).not.to.match(/127\.0\.0\.1:(8080|50051)/);
    // Each curl also prints its status on a line of its own, so every call of the block can be checked.
    const script = [exportLine, ...blocks]
      .join("\n")
      // Only the calls that print (at the start of a line), not those captured in a variable.
      .replaceAll(/^curl -s /gm, `curl -s -w '\\nHTTP %{http_code}\\n' `);
    const { stdout } = await run("bash", ["--norc", "--noprofile", "-c", `set -euo pipefail\n${script}`], {
      cwd: ROOT,
      env: { PATH: process.env.PATH },
    });
    const statuses = [...stdout.matchAll(/^HTTP (\d{3})$/gm)].map((match) => Number(match[1]));
    // The two captured calls (USER_ID, SESSION_ID) are checked by the calls that use what they captured.
    expect(statuses.length, stdout).to.be.at.least(8);
    expect(
      statuses.filter((status) => status < 200 || status > 299),
      stdout,
    ).to.deep.equal([]);
    expect(stdout).to.include('"kyc_status":"approved"');
    expect(stdout).to.include('"object":"list"');
    // buf curl (it fails the script on an error): the services through reflection, then an admin call.
    expect(stdout).to.match(/^svc\.v1\.UsersService$/m);
    expect(stdout).to.not.match(/^svc\.admin\.v1\.AdminService$/m);
    expect(stdout).to.match(/"name": "Default"/);

    // "Developing against Svc": the CLI takes its key and the service's address from the same line, nothing else.
    const trigger = await run(
      "bash",
      ["--norc", "--noprofile", "-c", `set -euo pipefail\n${exportLine}\nnode ${compiledEntry("src/cli/svc.ts")} trigger kyc.approved`],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH },
      },
    );
    expect(trigger.stdout).to.include("Trigger succeeded! Check svc listen (or the dashboard's live events) for kyc.approved.");
  });
});
