// Writing a benchmark's results file: the run's report replaces the file's top, and what was written by hand below
// the notes marker (the reading of the figures, the decisions they led to) is kept across runs.
import { readFileSync, writeFileSync } from "node:fs";

/** Everything from this line on is written by hand. */
const NOTES_MARKER = "<!-- notes -->";

export function writeResults(name: string, report: string): void {
  const path = new URL(`./results/${name}`, import.meta.url);
  let previous = "";
  try {
    previous = readFileSync(path, "utf8");
  } catch {
    // A first run: no notes yet.
  }
  const at = previous.indexOf(NOTES_MARKER);
  const notes = at >= 0 ? previous.slice(at) : NOTES_MARKER;
  writeFileSync(path, `${report.replace(/\n+$/, "")}\n\n${notes.replace(/\n+$/, "")}\n`);
}
