// The embedded database's own layer order, enforced over its import graph: a folder of src/embedded-mongo imports
// only folders of lower layers and no two files import each other, even through others. The order is read from
// the Layers table of src/embedded-mongo/README.md, the one place it is written.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import {
  folderOf,
  importCycles,
  importGraph,
  layerRows,
  refusedImports,
  ROOT,
  tableProblems,
  unresolvedImports,
} from "../architecture/layer-graph.ts";

const ROOT_DIR = fileURLToPath(new URL("../../src/embedded-mongo/", import.meta.url));
const rows = layerRows(path.join(ROOT_DIR, "README.md"));
const graph = importGraph(ROOT_DIR);
const folders = new Set([...graph.keys()].map((file) => folderOf(ROOT_DIR, file)));
const layerOf = new Map(rows.map(({ level, folder }) => [folder, level] as const));
const downward = (from: string, to: string) => layerOf.get(to)! < layerOf.get(from)!;

describe("embedded database: import graph of src/embedded-mongo", () => {
  it("reads the layer table: layers numbered from 0 without a gap, each row a folder named once, root on top", () => {
    expect(tableProblems(rows)).to.deep.equal([]);
    expect(rows.map((row) => row.folder).filter((folder) => !folders.has(folder))).to.deep.equal([]);
    expect(layerOf.get(ROOT)).to.equal(Math.max(...layerOf.values()));
  });

  it("gives every folder a layer", () => {
    expect([...folders].filter((folder) => !layerOf.has(folder))).to.deep.equal([]);
  });

  it("points one way: a folder imports only folders of lower layers", () => {
    expect(refusedImports(ROOT_DIR, graph, downward)).to.deep.equal([]);
  });

  it("has no cycle between files", () => {
    expect(importCycles(ROOT_DIR, graph)).to.deep.equal([]);
  });

  it("resolves every relative import to a file", () => {
    expect(unresolvedImports(ROOT_DIR, graph)).to.deep.equal([]);
  });

  it("would report an upward import and a cycle (checked on a made-up graph of its real folders)", () => {
    const lowest = rows.find((row) => row.level === 0)!.folder;
    const higher = rows.find((row) => row.level === 1)!.folder;
    const low = path.join(ROOT_DIR, lowest, "a.ts");
    const high = path.join(ROOT_DIR, higher, "b.ts");
    const made = new Map([
      [low, [high]],
      [high, [low]],
    ]);
    expect(refusedImports(ROOT_DIR, made, downward)).to.deep.equal([`${lowest}/a.ts -> ${higher}/b.ts`]);
    expect(importCycles(ROOT_DIR, made)).to.deep.equal([`${lowest}/a.ts -> ${higher}/b.ts -> ${lowest}/a.ts`]);
  });
});
