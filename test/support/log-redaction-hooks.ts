// A mocha root hook: no log line written by a service under test may contain a secret or a piece of personal data
// that the run used (API keys, webhook secrets, admin token, phones, emails, names, birth dates). A serial run checks
// once, after the whole run; a parallel run (`npm test`) after each file, in each worker, over every line and value
// of the files that worker ran so far.
import { expect } from "chai";
import { capturedLogLines } from "./log-capture.ts";
import { sensitiveValues } from "./sensitive-values.ts";

// How many lines and values earlier checks covered: each (line, value) pair is looked at once, so checking after
// every file costs what one check at the end does.
let linesChecked = 0;
let valuesChecked = 0;

export const mochaHooks = {
  afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    if (capturedLogLines.length === 0) return;
    const leaks: string[] = [];
    const values = sensitiveValues();
    for (const [index, line] of capturedLogLines.entries()) {
      // A line checked before has met the values known then; only the values added since are new to it.
      for (let v = index < linesChecked ? valuesChecked : 0; v < values.length; v++) {
        if (line.includes(values[v]!)) leaks.push(`${JSON.stringify(values[v])} in: ${line.slice(0, 300)}`);
      }
    }
    linesChecked = capturedLogLines.length;
    valuesChecked = values.length;
    expect(leaks, `sensitive values in ${capturedLogLines.length} log lines (checked ${values.length} values)`).to.deep.equal([]);
  },
};
