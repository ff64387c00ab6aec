// A mocha global fixture (.mocharc.cjs `require`): before the run, src/ and gen/ are transpiled once into
// .test-build/, for the service, database and CLI processes the tests start. Through tsx a process spends about half
// of its start's CPU in tsx's loader hooks (each import answered on another thread, from its cache), and the suite
// starts dozens of them. Each file is transformed exactly as tsx transforms it (the same esbuild options, the source
// map inline), so the code those processes run, and the coverage c8 maps back onto src/*.ts, is what tsx runs; only
// the relative `.ts` import specifiers are rewritten to `.js`, a change of equal length that keeps the map exact.
// Skipped while the build is newer than every source file and was made by this Node version.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { transform, type TransformOptions } from "esbuild";
import { COMPILED_ROOT, ROOT } from "./processes.ts";

const SOURCE_DIRS = ["src", "gen"];
const STAMP = path.join(COMPILED_ROOT, ".built");
const RELATIVE_TS_IMPORT = /((?:\bfrom|\bimport)\s*\(?\s*)(["'])(\.{1,2}\/[^"'\n]*?)\.ts\2/g;

function sourceFiles(): string[] {
  const files: string[] = [];
  for (const dir of SOURCE_DIRS) {
    for (const entry of readdirSync(path.join(ROOT, dir), { recursive: true })) {
      const file = path.join(dir, String(entry));
      if (file.endsWith(".ts") && !file.endsWith(".d.ts") && !file.endsWith(".spec.ts")) files.push(file);
    }
  }
  return files;
}

/** The newest change under the sources (a directory's own time moves when a file in it is added or removed). */
function newestChange(files: string[]): number {
  let newest = statSync(path.join(ROOT, "tsconfig.json")).mtimeMs;
  for (const dir of SOURCE_DIRS) {
    newest = Math.max(newest, statSync(path.join(ROOT, dir)).mtimeMs);
    for (const entry of readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })) {
      if (entry.isDirectory()) newest = Math.max(newest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
    }
  }
  for (const file of files) newest = Math.max(newest, statSync(path.join(ROOT, file)).mtimeMs);
  return newest;
}

function isFresh(files: string[]): boolean {
  return existsSync(STAMP) && readFileSync(STAMP, "utf8") === process.version && statSync(STAMP).mtimeMs > newestChange(files);
}

/** tsx's options for an ES module (its loader's transform), with this repository's tsconfig. */
function transformOptions(sourcefile: string): TransformOptions {
  const tsconfig = JSON.parse(readFileSync(path.join(ROOT, "tsconfig.json"), "utf8")) as { compilerOptions: object };
  return {
    target: `node${process.versions.node}`,
    loader: "ts",
    format: "esm",
    sourcefile,
    sourcemap: true,
    sourcesContent: true,
    minifyWhitespace: true,
    keepNames: true,
    tsconfigRaw: { compilerOptions: tsconfig.compilerOptions },
  };
}

async function transpile(file: string): Promise<void> {
  const source = path.join(ROOT, file);
  const result = await transform(readFileSync(source, "utf8"), transformOptions(source));
  const code = result.code.replace(
    RELATIVE_TS_IMPORT,
    (_all, lead: string, quote: string, specifier: string) => `${lead}${quote}${specifier}.js${quote}`,
  );
  const map = Buffer.from(result.map).toString("base64");
  const target = path.join(COMPILED_ROOT, file.replace(/\.ts$/, ".js"));
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, `${code}\n//# sourceMappingURL=data:application/json;base64,${map}\n`);
}

export async function mochaGlobalSetup(): Promise<void> {
  const files = sourceFiles();
  if (isFresh(files)) return;
  rmSync(COMPILED_ROOT, { recursive: true, force: true });
  await Promise.all(files.map(transpile));
  // ES modules: the files are .js, and the repository's package.json says "type": "module" above them.
  writeFileSync(STAMP, process.version);
}
