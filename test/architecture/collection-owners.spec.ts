// One repository per collection: each MongoDB collection of the service is opened by one file of src/, its
// repository, which alone writes it and makes its indexes. The console's read-only queries read many collections
// for its pages and write none.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));
/** Files that open collections only to read them. */
const READ_ONLY = ["store/console-queries.ts"];
const WRITES =
  /\.(insertOne|insertMany|updateOne|updateMany|replaceOne|deleteOne|deleteMany|findOneAndUpdate|findOneAndReplace|findOneAndDelete|bulkWrite|createIndex|createIndexes)\(/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "embedded-mongo" ? [] : sourceFiles(full);
    return entry.name.endsWith(".ts") ? [full] : [];
  });
}

/** The collections each file opens by name: `db.collection("users")`, `db.collection<T>("users")`. */
const opened = new Map(
  sourceFiles(SRC).map((file) => {
    const text = readFileSync(file, "utf8");
    const names = [...text.matchAll(/\.collection(?:<[^>]*>)?\(\s*"([a-z_]+)"/g)].map((match) => match[1]!);
    return [path.relative(SRC, file).split(path.sep).join("/"), new Set(names)] as const;
  }),
);

describe("collections of the service", () => {
  it("each is opened by one repository (the console's read-only queries aside)", () => {
    const openers = new Map<string, string[]>();
    for (const [file, names] of opened) {
      if (READ_ONLY.includes(file)) continue;
      for (const name of names) openers.set(name, [...(openers.get(name) ?? []), file]);
    }
    expect(openers.get("users"), "the users collection").to.deep.equal(["store/user-repository.ts"]);
    const shared = [...openers].filter(([, files]) => files.length > 1).map(([name, files]) => `${name}: ${files.join(", ")}`);
    expect(shared).to.deep.equal([]);
  });

  it("is never written by the read-only queries", () => {
    for (const file of READ_ONLY) {
      expect(opened.get(file)?.size ?? 0, `${file} opens collections`).to.be.greaterThan(0);
      expect(readFileSync(path.join(SRC, file), "utf8")).not.to.match(WRITES);
    }
  });
});
