// $pull as mongod applies it (mingo's misses `$or`/`$and` conditions over array documents): a condition whose
// first key is a value operator ($gt, $in...) tests each element as a value; any other document is a query that
// object elements must match; anything else removes the elements equal to it.
import type { Document } from "bson";
import { compareValues, isPlainObject } from "./bson-order.ts";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import { compileFilter } from "./matcher.ts";
import type { Collation } from "./collation.ts";

const LOGICAL = new Set(["$and", "$or", "$nor", "$expr", "$where", "$text", "$comment", "$jsonSchema"]);

/** Whether an array element is one `{$pull: {path: cond}}` removes. */
function elementTest(cond: unknown, collation: Collation | undefined): (el: unknown) => boolean {
  if (isPlainObject(cond)) {
    const first = Object.keys(cond)[0];
    // compileFilter tests a plain comparison (`{id: {$in: [...]}}`, the usual condition) without compiling a query.
    if (first?.startsWith("$") && !LOGICAL.has(first)) {
      const test = compileFilter({ v: cond }, undefined, collation)!; // a filter of one field is never empty
      return (el) => test({ v: el });
    }
    const test = compileFilter(cond, undefined, collation);
    return (el) => isPlainObject(el) && (test === undefined || test(el));
  }
  return (el) =>
    compareValues(el, cond, collation?.compare) === 0 &&
    (!isPlainObject(el) || JSON.stringify(Object.keys(el)) === JSON.stringify(Object.keys(cond as object)));
}

/** Applies `{$pull: {path: cond}}` to `doc` in place (doc is the caller's private copy); true when something was removed. */
export function applyPull(doc: Document, pulls: Document, collation?: Collation): boolean {
  let removed = false;
  for (const [path, cond] of Object.entries(pulls)) {
    const parts = path.split(".");
    const field = parts.pop()!; // split gives at least one part
    let parent: unknown = doc;
    for (const p of parts) {
      parent = parent !== null && typeof parent === "object" ? (parent as Document)[p] : undefined;
    }
    if (parent === null || typeof parent !== "object") continue;
    const array = (parent as Document)[field];
    if (array === undefined) continue;
    const kept = pulledArray(array, cond, collation);
    if (kept !== array) {
      (parent as Document)[field] = kept;
      removed = true;
    }
  }
  return removed;
}

/** The array without the elements `cond` removes (the same array when it removes none). */
export function pulledArray(array: unknown, cond: unknown, collation: Collation | undefined): unknown[] {
  if (!Array.isArray(array)) throw commandError(ErrorCodes.BadValue, "Cannot apply $pull to a non-array value");
  const test = elementTest(cond, collation);
  const kept = array.filter((el) => !test(el));
  return kept.length === array.length ? array : kept;
}
