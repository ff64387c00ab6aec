// npm run lint:openapi: builds the OpenAPI document the server serves (the same builder, in process: no server
// needed), writes it to a temporary file and lints it with Spectral (spectral:oas, .spectral.yaml) and Redocly
// (recommended, redocly.yaml) side by side. Fails when either reports an error.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PUBLIC_API } from "../src/api/public-api.ts";
import { buildOpenApiDocument } from "../src/rest/openapi/document.ts";

const root = join(import.meta.dirname, "..");
const bin = (name: string) => join(root, "node_modules", ".bin", name);

function run(name: string, command: string, args: string[]): Promise<{ name: string; code: number; output: string }> {
  return new Promise((resolve) => {
    // No telemetry or update checks: CI reaches no network but the package registries.
    const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" };
    const child = spawn(command, args, { cwd: root, env });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("close", (code) => resolve({ name, code: code ?? 1, output }));
  });
}

const dir = mkdtempSync(join(tmpdir(), "svc-openapi-"));
try {
  const file = join(dir, "openapi.json");
  writeFileSync(file, JSON.stringify(buildOpenApiDocument(PUBLIC_API), null, 2));
  const results = await Promise.all([
    run("Spectral (spectral:oas)", bin("spectral"), ["lint", "--ruleset", join(root, ".spectral.yaml"), "--fail-severity", "error", file]),
    run("Redocly (recommended)", bin("redocly"), ["lint", "--config", join(root, "redocly.yaml"), "--max-problems", "200", file]),
  ]);
  for (const { name, code, output } of results) {
    // Redocly's boxed notice that Node 20 is ending says nothing about the document.
    const report = output.replace(/\n? *╔[\s\S]*?╝\n?/, "\n").trim();
    console.log(`== ${name}: ${code === 0 ? "ok" : `failed (exit ${code})`}\n${report}\n`);
  }
  process.exitCode = results.some((r) => r.code !== 0) ? 1 : 0;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
