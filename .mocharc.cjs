// Mocha's options for `npm test` (every spec) and for `npx mocha <files>`: when spec files are named on the command
// line, only they run (a JSON config's `spec` would be added to them, running the whole suite), one after another.
// The whole suite runs its files one after another, or in SVC_TEST_JOBS parallel worker processes: the suite is
// CPU-bound, one file at a time keeps one core busy, and SVC_TEST_JOBS=2 uses both of a 2-core machine. Serial stays
// the default until two workers have passed on a quiet machine: on the shared one (load 10 to 26) timing-bound tests
// (process starts within 20-30 s, the browser tests, timed drains) failed in two workers and not serially.
const named = process.argv.slice(2).some((arg) => /\.spec\.ts$/.test(arg) && !arg.startsWith("-"));
const jobs = Number(process.env.SVC_TEST_JOBS ?? 1);

module.exports = {
  "node-option": ["import=tsx", "no-experimental-require-module"],
  extension: ["ts"],
  require: ["test/support/compiled-build.ts", "test/support/openapi-contract-hooks.ts", "test/support/log-redaction-hooks.ts", "test/support/unfinished-process-hooks.ts"],
  ...(named ? {} : { spec: ["test/**/*.spec.ts"], parallel: jobs > 1, jobs }),
  timeout: 20000,
};
