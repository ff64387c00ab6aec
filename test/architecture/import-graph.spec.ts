// The layer order of src/, enforced over the import graph: a folder imports only folders of lower layers, no two
// files import each other even through others, and the embedded database imports nothing of the service. The
// order is read from the table in docs/architecture.md, the one place it is written, so the two cannot drift.
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { folderOf, importCycles, importGraph, layerRows, refusedImports, ROOT, tableProblems, unresolvedImports } from "./layer-graph.ts";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));
const rows = layerRows(fileURLToPath(new URL("../../docs/architecture.md", import.meta.url)));

/** Imports nothing of the service, and only the process entry and tests import it. */
const ISOLATED = "embedded-mongo";

const graph = importGraph(SRC);
const folders = new Set([...graph.keys()].map((file) => folderOf(SRC, file)));
const layerOf = new Map(rows.map(({ level, folder }) => [folder, level] as const));

describe("import graph of src/", () => {
  it("reads the layer table: layers numbered from 0 without a gap, each row a folder of src/ named once", () => {
    expect(tableProblems(rows)).to.deep.equal([]);
    expect(new Set(rows.map((row) => row.level)).size).to.be.greaterThan(5);
    expect(rows.map((row) => row.folder).filter((folder) => !folders.has(folder))).to.deep.equal([]);
  });

  it("gives every folder a layer", () => {
    expect([...folders].filter((folder) => folder !== ISOLATED && !layerOf.has(folder))).to.deep.equal([]);
  });

  it("points one way: a folder imports only folders of lower layers", () => {
    const allowed = (from: string, to: string) => (to === ISOLATED ? from === ROOT : from !== ISOLATED && layerOf.get(to)! < layerOf.get(from)!);
    expect(refusedImports(SRC, graph, allowed)).to.deep.equal([]);
  });

  it("has no cycle between files", () => {
    expect(importCycles(SRC, graph)).to.deep.equal([]);
  });

  it("resolves every relative import to a file", () => {
    expect(unresolvedImports(SRC, graph)).to.deep.equal([]);
  });
});
