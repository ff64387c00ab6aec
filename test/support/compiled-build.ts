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

/** The files to transpile, and the directories holding them (with src/ and gen/ themselves). */
function sources(): { files: string[]; dirs: string[] } {
  const files: string[] = [];
  const dirs = [...SOURCE_DIRS];
  for (const dir of SOURCE_DIRS) {
    for (const entry of readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })) {
      const relative = path.relative(ROOT, path.join(entry.parentPath, entry.name));
      if (entry.isDirectory()) dirs.push(relative);
      else if (relative.endsWith(".ts") && !relative.endsWith(".d.ts") && !relative.endsWith(".spec.ts")) files.push(relative);
    }
  }
  return { files, dirs };
}

/**
 * Whether the build was made by this Node version after the last change of tsconfig.json and of every source file
 * and directory (a directory's own time moves when a file in it is added or removed).
 */
function isFresh({ files, dirs }: { files: string[]; dirs: string[] }): boolean {
  if (!existsSync(STAMP) || readFileSync(STAMP, "utf8") !== process.version) return false;
  const built = statSync(STAMP).mtimeMs;
  return ["tsconfig.json", ...dirs, ...files].every((entry) => statSync(path.join(ROOT, entry)).mtimeMs < built);
}

/** tsx's options for an ES module (its loader's transform), with this repository's tsconfig. */
function transformOptions(sourcefile: string, tsconfig: { compilerOptions: object }): TransformOptions {
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

async function transpile(file: string, tsconfig: { compilerOptions: object }): Promise<void> {
  const source = path.join(ROOT, file);
  const result = await transform(readFileSync(source, "utf8"), transformOptions(source, tsconfig));
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
  const found = sources();
  if (isFresh(found)) return;
  rmSync(COMPILED_ROOT, { recursive: true, force: true });
  const tsconfig = JSON.parse(readFileSync(path.join(ROOT, "tsconfig.json"), "utf8")) as { compilerOptions: object };
  await Promise.all(found.files.map((file) => transpile(file, tsconfig)));
  // ES modules: the files are .js, and the repository's package.json says "type": "module" above them.
  writeFileSync(STAMP, process.version);
}
