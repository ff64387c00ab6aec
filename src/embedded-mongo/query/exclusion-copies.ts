// Copies of stored documents along the paths a projection excludes. mingo's exclusion projections ($project, and
// find's through mingo) delete an excluded field inside an embedded document, or inside the documents of an array,
// from the object they are given: run on a stored document, they would remove it from the stored document itself.
import type { Document } from "bson";
import { isPlainObject } from "./bson-order.ts";

/** `0` or `false`: a projection's exclusion of a field. */
export function isExclusion(v: unknown): boolean {
  return v === 0 || v === false;
}

/** `node` with the objects and arrays along `parts` copied (through arrays, element by element). */
export function copyPath(node: unknown, parts: string[]): unknown {
  if (node === null || typeof node !== "object") return node;
  if (Array.isArray(node)) return node.map((el) => copyPath(el, parts));
  const [head, ...rest] = parts;
  if (head === undefined) return node;
  if (!(head in (node as Document))) return node;
  return { ...(node as Document), [head]: copyPath((node as Document)[head], rest) };
}

/** The paths a projection spec excludes (`0`/`false` leaves, dotted or nested), as path parts. */
function excludedPaths(spec: Document, prefix: string[] = []): string[][] {
  const paths: string[][] = [];
  for (const [key, v] of Object.entries(spec)) {
    const parts = [...prefix, ...key.split(".")];
    if (isExclusion(v)) paths.push(parts);
    else if (isPlainObject(v) && !Object.keys(v).some((k) => k.startsWith("$"))) paths.push(...excludedPaths(v, parts));
  }
  return paths;
}

/**
 * What mingo's exclusion projections need before they see a stored document: mingo deletes an excluded field
 * inside an embedded document (or the documents of an array) from the object it was given, so a projection run on
 * a stored document would remove that field from the stored document itself. This copies the objects and arrays
 * along each excluded path (a document without them is returned as it is); undefined when `spec` excludes no
 * nested field. A top-level field (`_id: 0` beside inclusions, the usual case) mingo removes from its own copy of
 * the document, so those paths cost no copy per document.
 */
export function copierForExclusions(spec: Document): ((doc: Document) => Document) | undefined {
  const paths = excludedPaths(spec).filter((parts) => parts.length > 1);
  if (paths.length === 0) return undefined;
  return (doc) => {
    let copy = doc;
    for (const parts of paths) copy = copyPath(copy, parts) as Document;
    return copy;
  };
}
