// CPU time of a process of a benchmark, all its threads (an embedded database's worker thread, GC) together or each,
// from /proc: what a run compares between its rounds when the machine is shared and wall time is not its own.
import { execSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

const CLOCK_TICKS = Number(execSync("getconf CLK_TCK").toString().trim()) || 100;

/** The process's user + system CPU seconds so far. */
export function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** CPU seconds each thread of the process has run so far, by thread id (Linux schedstat, nanoseconds). */
export function threadCpuSecondsOf(pid: number): Map<string, number> {
  const threads = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      threads.set(tid, Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]) / 1e9);
    } catch {
      // the thread ended meanwhile
    }
  }
  return threads;
}

/**
 * A process's CPU seconds between two readings of its threads: its main thread's, its busiest other thread's (an
 * embedded database's worker) and the rest's (GC helpers, libuv's pool, threads that came and went).
 */
export function threadCpuSplit(pid: number, before: Map<string, number>, after: Map<string, number>) {
  const delta = (tid: string) => (after.get(tid) ?? 0) - (before.get(tid) ?? 0);
  let busiest = 0;
  let total = 0;
  for (const tid of after.keys()) {
    total += delta(tid);
    if (tid !== String(pid)) busiest = Math.max(busiest, delta(tid));
  }
  const main = delta(String(pid));
  return { main, busiest, rest: total - main - busiest };
}
