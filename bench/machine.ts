// A line describing the machine a benchmark ran on, for its results file.
import { cpus, totalmem } from "node:os";

export function machineDescription(): string {
  const cpu = cpus();
  return `${cpu[0]?.model ?? "unknown CPU"}, ${cpu.length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${new Date().toISOString()}`;
}
