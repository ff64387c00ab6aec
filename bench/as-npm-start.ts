// Imported first by every bench that runs the service in its own process: restarts that process with the node
// options `npm start` gives the service (bench/service-node-options.ts) when it was started without them, so a run
// of `node --import tsx bench/<name>.bench.ts` measures what `npm start` runs. The restarted process's output and
// exit status are this one's.
import { spawnSync } from "node:child_process";
import { SERVICE_NODE_OPTIONS } from "./service-node-options.ts";

const missing = SERVICE_NODE_OPTIONS.filter((option) => !process.execArgv.includes(option));
if (missing.length > 0) {
  const run = spawnSync(process.execPath, [...missing, ...process.execArgv, ...process.argv.slice(1)], { stdio: "inherit" });
  process.exit(run.status ?? 1);
}
