// find/findAndModify projections. mingo projects inclusions, exclusions and computed fields; `$elemMatch` (also on
// arrays of scalars) and `$slice` (also next to exclusions, which mongod accepts) are applied here.
import type { Document } from "bson";
import { isPlainObject } from "./bson-order.ts";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import type { Collation } from "./collation.ts";
import { createQuery, runAggregation } from "./matcher.ts";
import { numericType } from "../bson/numbers.ts";
import { copierForExclusions, copyPath, isExclusion } from "./exclusion-copies.ts";
import { parsePositional, withValueAt } from "./projection-positional.ts";

function isOperator(v: unknown, op: string): v is Document {
  return v !== null && typeof v === "object" && !Array.isArray(v) && Object.keys(v as Document)[0] === op;
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
  if (head === undefined) return;
  const value = (node as Document)[head];
  if (rest.length === 0) {
    if (Array.isArray(value)) (node as Document)[head] = sliceArray(value, arg);
    return;
  }
  applySlice(value, rest, arg);
}

/** The fields an inclusion keeps, as a tree: true for a kept field, a subtree for the fields kept inside it. */
type InclusionTree = { [field: string]: true | InclusionTree };

/**
 * The tree of a projection that only includes plain paths (`1`/`true`, and `_id: 0` or `1`; `{_id: 1}` alone keeps
 * only the _id), or undefined for any other projection (exclusions, operators, expressions, numeric path parts,
 * paths inside one another).
 */
function inclusionTree(spec: Document): { tree: InclusionTree; id: boolean } | undefined {
  const tree: InclusionTree = {};
  let id = true;
  let any = false;
  for (const [path, v] of Object.entries(spec)) {
    if (path === "_id" && (isExclusion(v) || v === 1 || v === true)) {
      id = !isExclusion(v);
      any ||= id;
      continue;
    }
    if (v !== 1 && v !== true) return undefined;
    const parts = path.split(".");
    if (parts[0] === "_id" || parts.some((p) => p === "" || p.startsWith("$") || /^\d+$/.test(p))) return undefined;
    let node = tree;
    for (let i = 0; i < parts.length; i++) {
      const existing = node[parts[i]!];
      if (existing === true) return undefined;
      if (i === parts.length - 1) {
        if (existing !== undefined) return undefined;
        node[parts[i]!] = true;
      } else {
        node = (node[parts[i]!] ??= {}) as InclusionTree;
      }
    }
    any = true;
  }
  return any ? { tree, id } : undefined;
}

/** What an inclusion keeps of a value under a subtree: objects projected, arrays element by element, others dropped. */
function includeIn(value: unknown, tree: InclusionTree): unknown {
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const el of value) {
      const kept = includeIn(el, tree);
      if (kept !== undefined) out.push(kept);
    }
    return out;
  }
  if (!isPlainObject(value)) return undefined;
  const out: Document = {};
  // In the document's order, as mongod writes them.
  for (const key of Object.keys(value)) {
    const sub = tree[key];
    if (sub === undefined) continue;
    const kept = sub === true ? value[key] : includeIn(value[key], sub);
    if (kept !== undefined) out[key] = kept;
  }
  return out;
}

/** Whether a projection's value computes a field (anything but inclusion and exclusion flags). */
function computes(v: unknown): boolean {
  if (typeof v === "number" || typeof v === "boolean" || numericType(v) !== undefined) return false;
  if (!isPlainObject(v)) return true;
  const keys = Object.keys(v);
  return keys.some((k) => k.startsWith("$")) || keys.some((k) => computes(v[k]));
}

/**
 * A reusable projection function, or undefined for none. `filter` and `collation` are the query's, which a
 * positional path (`"arr.$"`) projects by.
 */
export function compileProjection(
  spec: Document | undefined,
  filter: Document = {},
  collation?: Collation,
): ((doc: Document) => Document) | undefined {
  if (!spec || Object.keys(spec).length === 0) return undefined;
  const positional = parsePositional(spec, filter, collation);
  if (!positional) return compileFieldProjection(spec);
  // The positional path includes its field, whose value is then narrowed to the matched element.
  const fields = Object.fromEntries(Object.entries(spec).map(([path, v]) => (path.endsWith(".$") ? [positional.path, 1] : [path, v])));
  const project = compileFieldProjection(fields)!;
  const parts = positional.path.split(".");
  return (doc) => withValueAt(project(doc), parts, positional.pick(doc));
}

function compileFieldProjection(spec: Document): ((doc: Document) => Document) | undefined {
  // Plain inclusions, the common case, directly (mingo builds a cursor for every document it projects).
  const plainInclusion = inclusionTree(spec);
  if (plainInclusion) {
    const { tree, id } = plainInclusion;
    if (id) tree._id = true;
    return (doc) => includeIn(doc, tree) as Document;
  }
  const plain: Document = {};
  const slices: [string, unknown][] = [];
  const elemMatches: [string, (el: unknown) => boolean][] = [];
  for (const [path, v] of Object.entries(spec)) {
    if (isOperator(v, "$slice")) slices.push([path, v.$slice]);
    else if (isOperator(v, "$elemMatch")) {
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
  const copyExcluded = copierForExclusions(base);
  // Computed fields are computed as $project computes them: typed as mongod types them, in its order.
  const stages = Object.values(base).some(computes) ? [{ $project: base }] : undefined;
  return (doc) => {
    const input = copyExcluded ? copyExcluded(doc) : doc;
    let out = stages ? runAggregation([input], stages, () => [])[0]! : baseQuery ? (baseQuery.find([input], base).all()[0] as Document) : { ...doc };
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
