// A process that cannot start says why in one line on standard error and exits 1: no stack trace for a taken
// port or a malformed bootstrap key (README, Configuration).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { freshDatabaseUri } from "../support/database.ts";
import { compiledEntry, freePort, runMainUntilExit, startProcess } from "../support/processes.ts";

function runMain(env: Record<string, string>) {
  // Never the repository's .svc-data/: a directory of this run (the processes exit before the suite does).
  return runMainUntilExit({ LOG_LEVEL: "silent", SVC_ADMIN_TOKEN: "adm_startup_errors_token", SVC_DATA_DIR: dataDir(), ...env });
}

let runDataDir: string | null = null;
function dataDir(): string {
  runDataDir ??= mkdtempSync(path.join(tmpdir(), "svc-startup-errors-"));
  return runDataDir;
}

function expectOneLine(result: { code: number | null; stderr: string }, pattern: RegExp): void {
  expect(result.code, result.stderr).to.equal(1);
  const lines = result.stderr.trimEnd().split("\n");
  expect(lines, result.stderr).to.have.length(1);
  expect(lines[0]).to.match(pattern);
}

describe("startup errors", function () {
  this.timeout(60_000);
  after(() => {
    if (runDataDir !== null) rmSync(runDataDir, { recursive: true, force: true });
  });

  for (const variable of ["PORT", "GRPC_PORT"] as const) {
    it(`a taken ${variable}: one line naming the address and the variable, exit 1`, async () => {
      const holder = net.createServer();
      const taken = await freePort();
      await new Promise<void>((resolve) => holder.listen(taken, "127.0.0.1", resolve));
      try {
        const ports = variable === "PORT" ? { PORT: String(taken), GRPC_PORT: "0" } : { PORT: "0", GRPC_PORT: String(taken) };
        const result = await runMain({ MONGODB_URI: await freshDatabaseUri("svc_startup"), ...ports });
        expectOneLine(
          result,
          new RegExp(
            `^cannot start: 127\\.0\\.0\\.1:${taken} \\(${variable}\\) is already in use by another process; stop it or set ${variable} to another port \\(0 picks a free one\\)$`,
          ),
        );
      } finally {
        holder.close();
      }
    });
  }

  const malformed: [string, string, RegExp][] = [
    ["SVC_SANDBOX_KEY", "not-a-key", /^configuration error: SVC_SANDBOX_KEY must be svc_test_ followed by at least 24 letters or digits$/],
    ["SVC_SANDBOX_KEY", `svc_live_${"a".repeat(24)}`, /^configuration error: SVC_SANDBOX_KEY must be svc_test_/],
    ["SVC_LIVE_KEY", `svc_live_${"a".repeat(23)}`, /^configuration error: SVC_LIVE_KEY must be svc_live_ followed by at least 24 letters or digits$/],
  ];
  for (const [variable, value, pattern] of malformed) {
    it(`${variable}=${value}: one configuration error line, exit 1`, async () => {
      expectOneLine(await runMain({ [variable]: value, PORT: "0", GRPC_PORT: "0" }), pattern);
    });
  }

  it("SVC_DATA_DIR naming a file: one configuration error line, exit 1", async () => {
    const file = path.join(dataDir(), "not-a-directory");
    writeFileSync(file, "");
    expectOneLine(
      await runMain({ SVC_DATA_DIR: file, PORT: "0", GRPC_PORT: "0" }),
      /^configuration error: SVC_DATA_DIR must be a directory \(created if missing\), got ".*not-a-directory", which is not one$/,
    );
  });

  it("SVC_DATA_DIR in use by another running server: one line naming the directory and that process, exit 1", async () => {
    const shared = mkdtempSync(path.join(dataDir(), "in-use-"));
    const { running } = await startProcess(
      process.execPath,
      [compiledEntry("src/embedded-mongo/cli.ts"), "--port", "0", "--dbpath", path.join(shared, "mongo")],
      {
        env: { SVC_DATA_DIR: shared },
        ready: /^mongodb:\/\//,
      },
    );
    try {
      const result = await runMain({ SVC_DATA_DIR: shared, PORT: "0", GRPC_PORT: "0" });
      const escaped = shared.replaceAll(/[.*+?^${}()|[\]\\]/g, "\\$&");
      expectOneLine(
        result,
        new RegExp(
          `^cannot start: SVC_DATA_DIR ${escaped} is in use by another process \\(pid ${running.process.pid}\\); stop it or set SVC_DATA_DIR to another directory$`,
        ),
      );
    } finally {
      await running.kill("SIGTERM");
    }
  });
});
