// The embedded database is loaded only when it is started: `src/main.ts` given MONGODB_URI loads no module of
// src/embedded-mongo, and without it (the embedded default) it does.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { expect } from "chai";
import { freshDatabaseUri } from "../support/database.ts";
import { COMPILED_ROOT, compiledEntry, startProcess } from "../support/processes.ts";

describe("loading the embedded database", function () {
  this.timeout(60_000);
  let traceDir = "";

  beforeEach(() => {
    traceDir = mkdtempSync(path.join(tmpdir(), "svc-module-trace-"));
  });
  afterEach(() => rmSync(traceDir, { recursive: true, force: true }));

  /**
   * Starts src/main.ts (transpiled, see compiledEntry) with `env`, stops it once it listens, and answers the
   * repository's source files it loaded (`.test-build/src/app.js` is `src/app.ts`).
   */
  async function modulesLoadedByStart(env: Record<string, string | undefined>): Promise<string[]> {
    const traceFile = path.join(traceDir, "modules.txt");
    const { running } = await startProcess(process.execPath, ["--import", "./test/support/module-trace.mjs", compiledEntry("src/main.ts")], {
      env: { PORT: "0", GRPC_PORT: "0", LOG_LEVEL: "warn", SVC_MODULE_TRACE: traceFile, ...env },
      ready: /Svc is listening/,
      timeoutMs: 40_000,
    });
    await running.kill("SIGTERM");
    const root = `${pathToFileURL(COMPILED_ROOT).href}/`;
    return [...new Set(readFileSync(traceFile, "utf8").split("\n"))]
      .filter((url) => url.startsWith(root))
      .map((url) => url.slice(root.length).replace(/\.js$/, ".ts"));
  }

  it("loads no module of src/embedded-mongo when MONGODB_URI is set", async () => {
    const loaded = await modulesLoadedByStart({ MONGODB_URI: await freshDatabaseUri("svc_embedded_loading") });
    expect(loaded, "the service itself was traced").to.include.members(["src/main.ts", "src/app.ts"]);
    expect(loaded.filter((file) => file.startsWith("src/embedded-mongo/"))).to.deep.equal([]);
  });

  it("loads src/embedded-mongo when it starts the embedded database", async () => {
    const loaded = await modulesLoadedByStart({ MONGODB_URI: undefined });
    expect(loaded).to.include("src/embedded-mongo/index.ts");
  });
});
