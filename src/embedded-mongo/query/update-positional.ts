// Resolves the positional update operators (`$`, `$[]`, `$[<id>]` with arrayFilters) into concrete paths against the
// document as it was before the update, as mongod does: each path is resolved once, so `{$set: {'c.$.a': 1,
// 'c.$.b': 2}}` updates two fields of the one matched element and array filters see the original values.
import type { Document } from "bson";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import { formatValue } from "../bson/format.ts";
import { createQuery } from "./matcher.ts";
import type { Collation } from "./collation.ts";

const ARRAY_FILTER_ID = /^\$\[([a-z][a-zA-Z0-9]*)?\]$/;

function isPositional(part: string): boolean {
  return part === "$" || ARRAY_FILTER_ID.test(part);
}

export function hasPositional(update: Document): boolean {
  for (const op of Object.keys(update)) {
    const fields = update[op];
    if (fields === null || typeof fields !== "object") continue;
    // Every positional part holds a "$": a path without one is not split (the usual update, on every statement).
    for (const path of Object.keys(fields)) if (path.includes("$") && path.split(".").some(isPositional)) return true;
  }
  return false;
}

/** Array filters by identifier, checked as mongod checks them (one top-level identifier per filter, no duplicates). */
function parseArrayFilters(arrayFilters: Document[] | undefined, collation?: Collation): Map<string, (el: unknown) => boolean> {
  const byId = new Map<string, (el: unknown) => boolean>();
  for (const filter of arrayFilters ?? []) {
    const ids = new Set(Object.keys(filter).map((k) => k.split(".")[0]));
    const [id] = ids;
    if (ids.size !== 1 || id === undefined) {
      throw commandError(
        ErrorCodes.FailedToParse,
        `Error parsing array filter :: caused by :: Expected a single top-level field name, found '${[...ids][0]}' and '${[...ids][1]}'`,
      );
    }
    if (!/^[a-z][a-zA-Z0-9]*$/.test(id)) {
      throw commandError(
        ErrorCodes.BadValue,
        `Error parsing array filter :: caused by :: The top-level field name must be an alphanumeric string beginning with a lowercase letter, found '${id}'`,
      );
    }
    if (byId.has(id)) throw commandError(ErrorCodes.FailedToParse, `Found multiple array filters with the same top-level field name ${id}`);
    const query = createQuery(filter, undefined, collation);
    byId.set(id, (el) => query.test({ [id]: el }));
  }
  return byId;
}

/**
 * The index of the array element the query matched, for the positional `$` at `arrayPath`: the first element that
 * alone (the array replaced by a one-element array) still lets the query match, when an empty array would not.
 */
function matchedIndex(
  doc: Document,
  arrayPath: string[],
  array: unknown[],
  query: Document | undefined,
  collation: Collation | undefined,
): number | undefined {
  if (!query) return undefined;
  const test = createQuery(query, undefined, collation);
  // A query that matches whatever the array holds did not match on it: no position to report.
  if (test.test(replaceAt(doc, arrayPath, []))) return undefined;
  for (let i = 0; i < array.length; i++) {
    const probe = replaceAt(doc, arrayPath, [array[i]]);
    if (test.test(probe)) return i;
  }
  return undefined;
}

function replaceAt(doc: Document, path: string[], value: unknown): Document {
  const [head, ...rest] = path;
  if (head === undefined) return value as Document;
  const copy: Document = Array.isArray(doc) ? ([...doc] as unknown as Document) : { ...doc };
  copy[head] = replaceAt((doc[head] ?? {}) as Document, rest, value);
  return copy;
}

function valueAt(doc: unknown, path: string[]): unknown {
  let cur = doc;
  for (const p of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Document)[p];
  }
  return cur;
}

/**
 * Rewrites an operator update so every path is concrete (numeric indexes instead of `$`, `$[]`, `$[id]`);
 * paths whose filtered positions match nothing disappear.
 */
export function resolvePositionalPaths(
  doc: Document,
  update: Document,
  query: Document | undefined,
  arrayFilters: Document[] | undefined,
  collation?: Collation,
): Document {
  const filters = parseArrayFilters(arrayFilters, collation);
  const used = new Set<string>();
  for (const fields of Object.values(update)) {
    if (!fields || typeof fields !== "object") continue;
    for (const path of Object.keys(fields as Document)) {
      for (const part of path.split(".")) {
        const id = ARRAY_FILTER_ID.exec(part)?.[1];
        if (id === undefined) continue;
        if (!filters.has(id)) throw commandError(ErrorCodes.BadValue, `No array filter found for identifier '${id}' in path '${path}'`);
        used.add(id);
      }
    }
  }
  for (const id of filters.keys()) {
    if (!used.has(id))
      throw commandError(ErrorCodes.FailedToParse, `The array filter for identifier '${id}' was not used in the update ${formatValue(update)}`);
  }
  const out: Document = {};
  for (const [op, fields] of Object.entries(update)) {
    if (!fields || typeof fields !== "object") {
      out[op] = fields;
      continue;
    }
    const resolved: Document = {};
    for (const [path, arg] of Object.entries(fields as Document)) {
      for (const concrete of expand(doc, path, query, filters, collation)) resolved[concrete] = arg;
    }
    out[op] = resolved;
  }
  return out;
}

function expand(
  doc: Document,
  path: string,
  query: Document | undefined,
  filters: Map<string, (el: unknown) => boolean>,
  collation: Collation | undefined,
): string[] {
  const parts = path.split(".");
  let prefixes: string[][] = [[]];
  for (const part of parts) {
    if (!isPositional(part)) {
      prefixes = prefixes.map((p) => [...p, part]);
      continue;
    }
    const next: string[][] = [];
    for (const prefix of prefixes) {
      const array = valueAt(doc, prefix);
      const shown = prefix.join(".");
      if (part === "$") {
        if (!Array.isArray(array)) throw commandError(ErrorCodes.BadValue, "The positional operator did not find the match needed from the query.");
        const index = matchedIndex(doc, prefix, array, query, collation);
        if (index === undefined) throw commandError(ErrorCodes.BadValue, "The positional operator did not find the match needed from the query.");
        next.push([...prefix, String(index)]);
        continue;
      }
      if (array === undefined)
        throw commandError(ErrorCodes.BadValue, `The path '${shown}' must exist in the document in order to apply array updates.`);
      if (!Array.isArray(array))
        throw commandError(ErrorCodes.BadValue, `Cannot apply array updates to non-array element ${shown}: ${JSON.stringify(array)}`);
      const id = ARRAY_FILTER_ID.exec(part)![1];
      const test = id === undefined ? undefined : filters.get(id);
      array.forEach((el, index) => {
        if (!test || test(el)) next.push([...prefix, String(index)]);
      });
    }
    prefixes = next;
  }
  return prefixes.map((p) => p.join("."));
}
