// A mocha root hook: after the whole run, no log line written by a service under test may contain a secret or
// a piece of personal data that the run used (API keys, webhook secrets, admin token, phones, emails, names,
// birth dates).
import { expect } from "chai";
import { capturedLogLines } from "./log-capture.ts";
import { sensitiveValues } from "./sensitive-values.ts";

export const mochaHooks = {
  afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    if (capturedLogLines.length === 0) return;
    const leaks: string[] = [];
    const values = sensitiveValues();
    for (const line of capturedLogLines) {
      for (const value of values) {
        if (line.includes(value)) leaks.push(`${JSON.stringify(value)} in: ${line.slice(0, 300)}`);
      }
    }
    expect(leaks, `sensitive values in ${capturedLogLines.length} log lines (checked ${values.length} values)`).to.deep.equal([]);
  },
};
