// Mocha's options for `npm test` (every spec) and for `npx mocha <files>`: when spec files are named on the command
// line, only they run (a JSON config's `spec` would be added to them, running the whole suite).
const named = process.argv.slice(2).some((arg) => /\.spec\.ts$/.test(arg) && !arg.startsWith("-"));

module.exports = {
  "node-option": ["import=tsx", "no-experimental-require-module"],
  extension: ["ts"],
  require: ["test/support/openapi-contract-hooks.ts", "test/support/log-redaction-hooks.ts", "test/support/unfinished-process-hooks.ts"],
  ...(named ? {} : { spec: ["test/**/*.spec.ts"] }),
  timeout: 20000,
};
