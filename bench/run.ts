// `npm run bench`: runs every bench/*.bench.ts in turn, each in its own process so one's load does not
// linger into the next. Each script writes its own bench/results/*.md.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const scripts = readdirSync(here)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
let failed = 0;
for (const script of scripts) {
  console.log(`\n=== ${script}`);
  const run = spawnSync(process.execPath, ["--import", "tsx", join(here, script)], { stdio: "inherit" });
  if (run.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
