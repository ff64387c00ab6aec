// find/findAndModify projections. mingo projects inclusions, exclusions and computed fields; `$elemMatch` (also on
// arrays of scalars) and `$slice` (also next to exclusions, which mongod accepts) are applied here.
import type { Document } from "bson";
import { commandError, ErrorCodes } from "./errors.ts";
import { createQuery } from "./matcher.ts";

function isOperator(v: unknown, op: string): v is Document {
  return v !== null && typeof v === "object" && !Array.isArray(v) && Object.keys(v as Document)[0] === op;
}

function isExclusion(v: unknown): boolean {
  return v === 0 || v === false;
}

function sliceArray(array: unknown[], arg: unknown): unknown[] {
  if (typeof arg === "number") return arg >= 0 ? array.slice(0, arg) : array.slice(Math.max(0, array.length + arg));
  if (Array.isArray(arg) && arg.length === 2 && typeof arg[0] === "number" && typeof arg[1] === "number") {
    const [skip, limit] = arg as [number, number];
    if (limit <= 0) throw commandError(ErrorCodes.BadValue, `Invalid $slice syntax. The limit must be a positive number: ${limit}`);
    const start = skip >= 0 ? Math.min(skip, array.length) : Math.max(0, array.length + skip);
    return array.slice(start, start + limit);
  }
  throw commandError(ErrorCodes.BadValue, "$slice only supports numbers and [skip, limit] arrays");
}

/** Slices the array at `parts` in place (the document is a fresh projection output), through nested arrays too. */
function applySlice(node: unknown, parts: string[], arg: unknown): void {
  if (node === null || typeof node !== "object") return;
  if (Array.isArray(node)) {
    for (const el of node) applySlice(el, parts, arg);
    return;
  }
  const [head, ...rest] = parts;
  const value = (node as Document)[head];
  if (rest.length === 0) {
    if (Array.isArray(value)) (node as Document)[head] = sliceArray(value, arg);
    return;
  }
  applySlice(value, rest, arg);
}

function copyPath(node: unknown, parts: string[]): unknown {
  if (node === null || typeof node !== "object") return node;
  if (Array.isArray(node)) return node.map((el) => copyPath(el, parts));
  if (parts.length === 0) return node;
  const [head, ...rest] = parts;
  if (!(head in (node as Document))) return node;
  return { ...(node as Document), [head]: copyPath((node as Document)[head], rest) };
}

/** A reusable projection function, or undefined for none. */
export function compileProjection(spec: Document | undefined): ((doc: Document) => Document) | undefined {
  if (!spec || Object.keys(spec).length === 0) return undefined;
  const plain: Document = {};
  const slices: [string, unknown][] = [];
  const elemMatches: [string, (el: unknown) => boolean][] = [];
  for (const [path, v] of Object.entries(spec)) {
    if (isOperator(v, "$slice")) slices.push([path, v.$slice]);
    else if (isOperator(v, "$elemMatch")) {
      if (path.includes(".")) throw commandError(ErrorCodes.BadValue, "Cannot use $elemMatch projection on a nested field.");
      const query = createQuery({ x: { $elemMatch: v.$elemMatch } });
      elemMatches.push([path, (el) => query.test({ x: [el] })]);
    } else plain[path] = v;
  }
  const inclusion = elemMatches.length > 0 || Object.entries(plain).some(([k, v]) => k !== "_id" && !isExclusion(v));
  const base: Document = { ...plain };
  if (inclusion) {
    for (const [path] of slices) base[path] = 1;
    for (const [path] of elemMatches) base[path] = 1;
  }
  const baseQuery = Object.keys(base).length ? createQuery({}) : undefined;
  return (doc) => {
    let out = baseQuery ? (baseQuery.find([doc], base).all()[0] as Document) : { ...doc };
    for (const [path, arg] of slices) {
      const parts = path.split(".");
      out = copyPath(out, parts) as Document;
      applySlice(out, parts, arg);
    }
    for (const [path, test] of elemMatches) {
      const value = doc[path];
      delete out[path];
      // mongod places $elemMatch-projected fields after the other included fields.
      const found = Array.isArray(value) ? value.find(test) : undefined;
      if (found !== undefined) out[path] = [found];
    }
    return out;
  };
}
