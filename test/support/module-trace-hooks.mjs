// Module loader hooks of module-trace.mjs: each resolved URL, one line, to the trace file.
import { appendFileSync } from "node:fs";

let traceFile = "";

export function initialize(data) {
  traceFile = data.file;
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  appendFileSync(traceFile, `${resolved.url}\n`);
  return resolved;
}
