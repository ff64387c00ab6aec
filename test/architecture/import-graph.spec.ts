// The layer order of src/, enforced over the import graph: a folder imports only folders of lower layers, no two
// files import each other even through others, and the embedded database imports nothing of the service. The
// order is read from the table in docs/architecture.md, the one place it is written, so the two cannot drift.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));
const ARCHITECTURE = fileURLToPath(new URL("../../docs/architecture.md", import.meta.url));
/** How the table names the files directly in src/. */
const ROOT = "(root)";

/** The rows of the Layers table: its layer number and folder (`` `store/` ``, or `root`). */
function layerRows(markdown: string): { level: number; folder: string }[] {
  const section = markdown.split(/^## /m).find((part) => part.startsWith("Layers\n"));
  if (!section) throw new Error("docs/architecture.md has no Layers section");
  return [...section.matchAll(/^\| (\d+) \| (?:`([a-z-]+)\/`|root) \|/gm)].map((row) => ({ level: Number(row[1]), folder: row[2] ?? ROOT }));
}

const rows = layerRows(readFileSync(ARCHITECTURE, "utf8"));

/** Imports nothing of the service, and only the process entry and tests import it. */
const ISOLATED = "embedded-mongo";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith(".ts") ? [full] : [];
  });
}

function folderOf(file: string): string {
  const parts = path.relative(SRC, file).split(path.sep);
  return parts.length === 1 ? ROOT : parts[0]!;
}

/** Relative imports of a file inside src/, static and dynamic, types included. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const found: string[] = [];
  for (const match of text.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) {
    const target = path.normalize(path.join(path.dirname(file), match[1]!));
    if (target.startsWith(SRC)) found.push(target);
  }
  return found;
}

const files = sourceFiles(SRC);
const graph = new Map(files.map((file) => [file, importsOf(file)]));
const layerOf = new Map(rows.map(({ level, folder }) => [folder, level] as const));

describe("import graph of src/", () => {
  it("reads the layer table: layers numbered from 0 without a gap, each row a folder of src/ named once", () => {
    const levels = [...new Set(rows.map((row) => row.level))];
    expect(levels).to.deep.equal(levels.map((_, index) => index));
    expect(levels.length).to.be.greaterThan(5);
    expect(layerOf.size, "a folder named twice").to.equal(rows.length);
    const folders = new Set(files.map(folderOf));
    expect(rows.map((row) => row.folder).filter((folder) => !folders.has(folder))).to.deep.equal([]);
  });

  it("gives every folder a layer", () => {
    const folders = new Set(files.map(folderOf));
    folders.delete(ISOLATED);
    expect([...folders].filter((folder) => !layerOf.has(folder))).to.deep.equal([]);
  });

  it("points one way: a folder imports only folders of lower layers", () => {
    const violations: string[] = [];
    for (const [file, targets] of graph) {
      const from = folderOf(file);
      for (const target of targets) {
        const to = folderOf(target);
        if (from === to) continue;
        const allowed = to === ISOLATED ? from === ROOT : from !== ISOLATED && layerOf.get(to)! < layerOf.get(from)!;
        if (!allowed) violations.push(`${path.relative(SRC, file)} -> ${path.relative(SRC, target)}`);
      }
    }
    expect(violations).to.deep.equal([]);
  });

  it("has no cycle between files", () => {
    const state = new Map<string, "visiting" | "done">();
    const cycles: string[] = [];
    const visit = (file: string, trail: string[]) => {
      if (state.get(file) === "done") return;
      if (state.get(file) === "visiting") {
        cycles.push([...trail.slice(trail.indexOf(file)), file].map((f) => path.relative(SRC, f)).join(" -> "));
        return;
      }
      state.set(file, "visiting");
      for (const target of graph.get(file) ?? []) visit(target, [...trail, file]);
      state.set(file, "done");
    };
    for (const file of files) visit(file, []);
    expect(cycles).to.deep.equal([]);
  });

  it("resolves every relative import to a file", () => {
    const missing = [...graph].flatMap(([file, targets]) => targets.filter((t) => !graph.has(t)).map((t) => `${path.relative(SRC, file)} -> ${t}`));
    expect(missing).to.deep.equal([]);
  });
});
