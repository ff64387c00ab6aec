// The drivers' unified specification tests (spec-tests/<area>/*.json) run through the official driver against an
// embedded server. A test known to fail is listed with its reason in spec-tests/known-failures.json: it is
// reported, not failed; any other failure fails the suite. A test that does not apply to the server, or uses an
// operation the runner or server does not support, passes with the reason in its title. Counts are printed at
// the end.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { MongoClient, type Document } from "mongodb";
import { startEmbeddedMongo, type EmbeddedMongo } from "../../src/embedded-mongo/index.ts";
import { loadSpecFiles, runTest, type Outcome, type ServerInfo } from "./unified-runner.ts";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "spec-tests");
const knownFailures = JSON.parse(readFileSync(path.join(root, "known-failures.json"), "utf8")) as Record<string, string>;
const files = loadSpecFiles(root);

describe("embedded-mongo: unified specification tests", function () {
  this.timeout(60_000);
  let mongo: EmbeddedMongo;
  let setup: MongoClient;
  let server: ServerInfo;
  const results: { key: string; outcome: Outcome }[] = [];

  before(async () => {
    // A one-member replica set, so replica-set-only tests (retryable writes, change streams) apply.
    mongo = await startEmbeddedMongo({ replSet: "rs0" });
    setup = new MongoClient(mongo.uri, { serverSelectionTimeoutMS: 5000 });
    await setup.connect();
    const info = await setup.db("admin").command({ buildInfo: 1 });
    const hello = await setup.db("admin").command({ hello: 1 });
    server = { uri: mongo.uri, version: (info.versionArray as number[]).slice(0, 3), topology: hello.setName ? "replicaset" : "single" };
  });

  after(async () => {
    await setup?.close();
    await mongo?.stop();
    const count = (s: Outcome["status"]) => results.filter((r) => r.outcome.status === s).length;
    const applicable = results.length - count("notApplicable");
    const skipped = results.filter((r) => r.outcome.status === "skipped");
    const failed = results.filter((r) => r.outcome.status === "failed");
    const reasons = new Map<string, number>();
    for (const r of skipped) {
      const reason = (r.outcome as { reason: string }).reason;
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    }
    const ran = applicable - skipped.length;
    console.log(
      `\n  unified spec tests (${server?.topology}, server ${server?.version.join(".")}): ${results.length} tests, ${applicable} applicable, ${count("passed")} passed, ${failed.length} failed (${failed.filter((f) => knownFailures[f.key]).length} known), ${skipped.length} skipped; pass rate of those run ${ran ? ((100 * count("passed")) / ran).toFixed(1) : "0"}%, of applicable ${applicable ? ((100 * count("passed")) / applicable).toFixed(1) : "0"}%`,
    );
    for (const [reason, n] of [...reasons].sort((a, b) => b[1] - a[1])) console.log(`    skipped ${n}: ${reason}`);
    const fixed = Object.keys(knownFailures).filter((k) => results.some((r) => r.key === k && r.outcome.status === "passed"));
    if (fixed.length)
      console.log(`    listed as known failures but passing now (remove them from known-failures.json):\n      ${fixed.join("\n      ")}`);
  });

  for (const file of files) {
    describe(`${file.area}/${file.file}`, () => {
      for (const test of file.json.tests as Document[]) {
        const key = `${file.area}/${file.file}: ${test.description}`;
        it(String(test.description), async function () {
          const outcome = await runTest(file, test, server, setup);
          results.push({ key, outcome });
          // Not pending (npm test runs these files too and reports no pending test): the title says why it did not
          // run, and the counts at the end list every reason.
          if (outcome.status === "notApplicable" || outcome.status === "skipped") {
            const reason = (outcome as { reason?: string }).reason;
            this.test!.title +=
              outcome.status === "notApplicable" ? ` (not applicable${reason ? `: ${reason}` : ""})` : ` (not run: ${reason ?? ""})`;
            return;
          }
          if (outcome.status === "failed" && !knownFailures[key]) throw new Error(outcome.reason);
        });
      }
    });
  }
});
