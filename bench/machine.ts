// What a benchmark's results file says it ran on: the machine, and the code measured (the working tree is shared).
import { execSync } from "node:child_process";
import { cpus, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { SERVICE_NODE_OPTIONS } from "./service-node-options.ts";

export function machineDescription(): string {
  const cpu = cpus();
  const options = SERVICE_NODE_OPTIONS.length > 0 ? SERVICE_NODE_OPTIONS.join(" ") : "none";
  return `${cpu[0]?.model ?? "unknown CPU"}, ${cpu.length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version} (the service's options, as \`npm start\` gives them: ${options}), ${new Date().toISOString()}`;
}

/** The commit measured, and whether `folders` had uncommitted changes then. */
export function codeRevision(folders: readonly string[] = ["src", "gen"]): string {
  const git = (args: string) =>
    execSync(`git ${args}`, { cwd: fileURLToPath(new URL("..", import.meta.url)) })
      .toString()
      .trim();
  const named = folders.map((folder) => `${folder}/`);
  const listed = named.length > 1 ? `${named.slice(0, -1).join(", ")} or ${named.at(-1)}` : (named[0] ?? "");
  try {
    // The results files are not code: a run started while the last one's results are uncommitted measures the same code.
    const changed = git(`status --porcelain -- ${folders.join(" ")} ':(exclude)bench/results'`);
    return `commit ${git("rev-parse --short HEAD")}${changed ? `, with uncommitted changes under ${listed}` : ""}`;
  } catch {
    return "unknown revision";
  }
}

/** `nproc` and the first lines of `lscpu`, as the machine's own tools say them. */
export function machineTools(): string {
  try {
    const nproc = execSync("nproc").toString().trim();
    const lscpu = execSync("lscpu")
      .toString()
      .split("\n")
      .slice(0, 10)
      .map((l) => l.replace(/\s+/g, " ").trim())
      .filter(Boolean);
    return `\`nproc\`: ${nproc}; \`lscpu | head\`: ${lscpu.join("; ")}`;
  } catch {
    return "nproc and lscpu unavailable";
  }
}
