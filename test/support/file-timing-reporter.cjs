// A mocha reporter for measuring the suite: mocha's spec output, and per spec file its wall time, this process's
// CPU time and the CPU time of the child processes it waited for, written as JSON to FILE_TIMING_OUT (default
// file-timing.json). Meaningful in a serial run, where the files run in this process:
//   SVC_TEST_JOBS=1 npx mocha --reporter test/support/file-timing-reporter.cjs
const fs = require("node:fs");
const os = require("node:os");
const Mocha = require("mocha");

const { EVENT_SUITE_BEGIN, EVENT_RUN_END, EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_TEST_PENDING } = Mocha.Runner.constants;

/** CPU time of this process's children that have exited and been waited for (Linux: /proc/self/stat). */
function childCpuMs() {
  const stat = fs.readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // cutime and cstime, in clock ticks of 10 ms.
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

class FileTimingReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const rows = [];
    let current = null;
    const close = () => {
      if (!current) return;
      const cpu = process.cpuUsage(current.cpu);
      rows.push({
        file: current.file.replace(`${process.cwd()}/`, ""),
        wallMs: Date.now() - current.start,
        cpuMs: Math.round((cpu.user + cpu.system) / 1000),
        childCpuMs: childCpuMs() - current.childCpu,
        tests: current.tests,
        loadAverage: os.loadavg()[0],
      });
      current = null;
    };
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      if (suite.file && current?.file !== suite.file) {
        close();
        current = { file: suite.file, start: Date.now(), cpu: process.cpuUsage(), childCpu: childCpuMs(), tests: 0 };
      }
    });
    for (const event of [EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_TEST_PENDING]) {
      runner.on(event, () => {
        if (current) current.tests++;
      });
    }
    runner.once(EVENT_RUN_END, () => {
      close();
      fs.writeFileSync(process.env.FILE_TIMING_OUT ?? "file-timing.json", JSON.stringify(rows, null, 1));
    });
  }
}

module.exports = FileTimingReporter;
