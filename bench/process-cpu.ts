// CPU time of a process of a benchmark, all its threads (an embedded database's worker thread, GC), from
// /proc/<pid>/stat: what a run compares between its rounds when the machine is shared and wall time is not its own.
import { execSync } from "node:child_process";
import { readFileSync } from "node:fs";

const CLOCK_TICKS = Number(execSync("getconf CLK_TCK").toString().trim()) || 100;

/** The process's user + system CPU seconds so far. */
export function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}
