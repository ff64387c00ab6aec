// The production path: `npm run build` compiles src/ and gen/ to dist/, and `node dist/main.js` serves without
// tsx, the embedded database's worker thread included.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect } from "chai";
import { freshDatabaseUri } from "../support/database.ts";
import { ROOT, startProcess } from "../support/processes.ts";

describe("npm run build, then node dist/main.js", function () {
  this.timeout(60_000);

  it("builds dist/ and starts from it, with a MongoDB URI and with the embedded database", async () => {
    await promisify(execFile)("npm", ["run", "--silent", "build"], { cwd: ROOT });
    for (const database of [{ MONGODB_URI: await freshDatabaseUri("svc_build") }, { MONGODB_URI: undefined }]) {
      const { running, match } = await startProcess(process.execPath, ["dist/main.js"], {
        // No coverage from dist/ (node passes NODE_V8_COVERAGE on unless a child's environment names it): it maps
        // back onto src/*.ts through tsc's source maps, whose function positions differ from those of the code the
        // other processes run (tsx's), and c8 would count each function of src/ twice.
        env: { ...database, PORT: "0", GRPC_PORT: "0", LOG_LEVEL: "warn", NODE_OPTIONS: undefined, NODE_V8_COVERAGE: "" },
        ready: /health\s+(http:\/\/\S+)\/healthz/,
      });
      try {
        expect((await fetch(`${match[1]}/healthz`)).status).to.equal(200);
        const openapi = await fetch(`${match[1]}/v1/openapi.json`);
        expect(openapi.status).to.equal(200);
      } finally {
        await running.kill("SIGTERM");
      }
      expect(running.process.exitCode, running.output.join("\n")).to.equal(0);
    }
  });
});
