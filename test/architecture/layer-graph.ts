// The import graph of a source folder checked against a layer table written in a markdown document: the table is
// the only place a layer order is written, and this reads it, so documentation and code cannot drift apart. Used
// for src/ (docs/architecture.md) and for the embedded database inside it (src/embedded-mongo/README.md).
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/** How a layer table names the files directly in the folder it describes. */
export const ROOT = "(root)";

/** One row of a layer table: its layer number and folder (`` `store/` ``, or `root`). */
export interface LayerRow {
  level: number;
  folder: string;
}

/** The rows of the `## Layers` section's table of a markdown document. */
export function layerRows(document: string): LayerRow[] {
  const markdown = readFileSync(document, "utf8");
  const section = markdown.split(/^## /m).find((part) => part.startsWith("Layers\n"));
  if (!section) throw new Error(`${document} has no Layers section`);
  return [...section.matchAll(/^\| (\d+) \| (?:`([a-z-]+)\/`|root) \|/gm)].map((row) => ({ level: Number(row[1]), folder: row[2] ?? ROOT }));
}

/** The TypeScript files of a folder and its subfolders. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith(".ts") ? [full] : [];
  });
}

/** The first folder under `root` that holds the file, or ROOT for a file directly in it. */
export function folderOf(root: string, file: string): string {
  const parts = path.relative(root, file).split(path.sep);
  return parts.length === 1 ? ROOT : parts[0]!;
}

/** Relative imports of a file that resolve inside `root`, static and dynamic, types included. */
export function importsOf(root: string, file: string): string[] {
  const text = readFileSync(file, "utf8");
  const found: string[] = [];
  for (const match of text.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) {
    const target = path.normalize(path.join(path.dirname(file), match[1]!));
    if (target.startsWith(root)) found.push(target);
  }
  return found;
}

/** Every file of `root` with the files it imports. */
export function importGraph(root: string): Map<string, string[]> {
  return new Map(sourceFiles(root).map((file) => [file, importsOf(root, file)]));
}

/** Each cycle of imports between files, as `a.ts -> b.ts -> a.ts` relative to `root`. */
export function importCycles(root: string, graph: Map<string, string[]>): string[] {
  const state = new Map<string, "visiting" | "done">();
  const cycles: string[] = [];
  const visit = (file: string, trail: string[]) => {
    if (state.get(file) === "done") return;
    if (state.get(file) === "visiting") {
      cycles.push([...trail.slice(trail.indexOf(file)), file].map((f) => path.relative(root, f)).join(" -> "));
      return;
    }
    state.set(file, "visiting");
    for (const target of graph.get(file) ?? []) visit(target, [...trail, file]);
    state.set(file, "done");
  };
  for (const file of graph.keys()) visit(file, []);
  return cycles;
}

/** Imports that name no file of the graph, as `from.ts -> target` relative to `root`. */
export function unresolvedImports(root: string, graph: Map<string, string[]>): string[] {
  return [...graph].flatMap(([file, targets]) => targets.filter((t) => !graph.has(t)).map((t) => `${path.relative(root, file)} -> ${t}`));
}

/** Imports from one folder into another that `allowed` refuses, as `from.ts -> to.ts` relative to `root`. */
export function refusedImports(root: string, graph: Map<string, string[]>, allowed: (from: string, to: string) => boolean): string[] {
  const violations: string[] = [];
  for (const [file, targets] of graph) {
    const from = folderOf(root, file);
    for (const target of targets) {
      const to = folderOf(root, target);
      if (from !== to && !allowed(from, to)) violations.push(`${path.relative(root, file)} -> ${path.relative(root, target)}`);
    }
  }
  return violations;
}

/** Layers numbered from 0 without a gap, each folder named once: what a well-formed table gives. */
export function tableProblems(rows: LayerRow[]): string[] {
  const problems: string[] = [];
  const levels = [...new Set(rows.map((row) => row.level))];
  if (levels.some((level, index) => level !== index)) problems.push(`layers ${levels.join(", ")} are not 0, 1, 2... in order`);
  const seen = new Set<string>();
  for (const { folder } of rows) {
    if (seen.has(folder)) problems.push(`${folder} named twice`);
    seen.add(folder);
  }
  return problems;
}
