// Mocha's options for `npm test` (every spec) and for `npx mocha <files>`: when spec files are named on the command
// line, only they run (a JSON config's `spec` would be added to them, running the whole suite), one after another.
// The whole suite runs its files in SVC_TEST_JOBS worker processes, 2 by default (a core each on the 2-core machines
// it is sized for: the suite is CPU-bound, one file at a time kept one core busy); SVC_TEST_JOBS=1 runs it serially.
const named = process.argv.slice(2).some((arg) => /\.spec\.ts$/.test(arg) && !arg.startsWith("-"));
const jobs = Number(process.env.SVC_TEST_JOBS ?? 2);

module.exports = {
  "node-option": ["import=tsx", "no-experimental-require-module"],
  extension: ["ts"],
  require: ["test/support/openapi-contract-hooks.ts", "test/support/log-redaction-hooks.ts", "test/support/unfinished-process-hooks.ts"],
  ...(named ? {} : { spec: ["test/**/*.spec.ts"], parallel: jobs > 1, jobs }),
  timeout: 20000,
};
