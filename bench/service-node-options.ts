// The node options `npm start` runs the service with, read from package.json's start script (one place says them),
// so that a bench measures the service as it ships: a bench that runs the service in its own process restarts
// itself with them when it was started without (bench/as-npm-start.ts), and a bench that spawns service processes
// gives them these.
import { readFileSync } from "node:fs";

const start: string = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).scripts.start;

/** The start script's options to node itself (`--import tsx` aside: every bench process loads TypeScript so). */
function nodeOptionsOf(script: string): string[] {
  const words = script.split(/\s+/);
  const options: string[] = [];
  for (let i = words.indexOf("node") + 1; i < words.length && words[i]!.startsWith("--"); i++) {
    if (words[i] === "--import") i++;
    else options.push(words[i]!);
  }
  return options;
}

export const SERVICE_NODE_OPTIONS: readonly string[] = nodeOptionsOf(start);
