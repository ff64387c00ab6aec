// Mocha's options for `npm test` (every spec) and for `npx mocha <files>`: when spec files are named on the command
// line, only they run (a JSON config's `spec` would be added to them, running the whole suite), one after another.
// The whole suite runs its files in SVC_TEST_JOBS parallel worker processes (default 3; 1 runs them one after
// another in this process). Three on two cores: many files wait on timers or on processes they started, and a third
// worker fills those waits (measured on a quiet 2-core machine: 327 s with two workers, 305 s with three, 339 s with
// four). Each worker takes the next file when it has finished one; the files that start processes
// or a browser, or wait on timers, go first, so that none of them starts last and leaves one worker running alone at
// the end while the other has nothing left.
const fs = require("node:fs");

const named = process.argv.slice(2).some((arg) => /\.spec\.ts$/.test(arg) && !arg.startsWith("-"));
const jobs = Number(process.env.SVC_TEST_JOBS ?? 3);

/** Where the long files are (a file in none of these is short): the earlier in this list, the earlier it runs. */
const LONG_FIRST = [
  "test/operations/jobs-crash.spec.ts",
  "test/operations/scale-out.spec.ts",
  "test/embedded-mongo/unified.spec.ts",
  "test/operations/npm-start.spec.ts",
  "test/dashboard/dashboard-journey.spec.ts",
  "test/cli/listen.spec.ts",
  "test/embedded-mongo/dbpath-lock.spec.ts",
  "test/server/grpc-connections.spec.ts",
  "test/operations/move-crash.spec.ts",
  "test/dashboard/",
  "test/rest/prism-proxy.spec.ts",
  "test/operations/durable-start.spec.ts",
  "test/operations/startup-errors.spec.ts",
  "test/fuzz/",
  "test/money/money-crash.spec.ts",
  "test/embedded-mongo/transaction-crash.spec.ts",
  "test/operations/",
  "test/identity/kyc-crash.spec.ts",
  "test/webhooks/webhook-recovery.spec.ts",
  "test/webhooks/delivery-crash.spec.ts",
  "test/users/crash.spec.ts",
  "test/cli/",
];

function specFiles() {
  const files = fs
    .readdirSync("test", { recursive: true })
    .map((file) => `test/${file}`)
    .filter((file) => file.endsWith(".spec.ts"))
    .sort();
  const rank = (file) => {
    const at = LONG_FIRST.findIndex((prefix) => file.startsWith(prefix));
    return at === -1 ? LONG_FIRST.length : at;
  };
  return files.sort((a, b) => rank(a) - rank(b));
}

module.exports = {
  "node-option": ["import=tsx", "no-experimental-require-module"],
  extension: ["ts"],
  require: [
    "test/support/compiled-build.ts",
    "test/support/openapi-contract-hooks.ts",
    "test/support/log-redaction-hooks.ts",
    "test/support/unfinished-process-hooks.ts",
  ],
  ...(named ? {} : { spec: specFiles(), parallel: jobs > 1, jobs }),
  timeout: 20000,
};
