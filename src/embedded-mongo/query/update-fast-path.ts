// Direct application of the common field operators ($set, $unset, $inc, $mul, $min, $max, $currentDate, $pull, and
// $push of values or of a plain $each, with or without an integer $slice) on
// plain-object paths. mingo's updater rebuilds its whole operator context on every call, which costs ~100 µs;
// this path copies only the objects along the modified paths (stored documents are never mutated).
// Anything it does not cover (arrays on the path, positional operators, array operators) returns undefined
// and the caller falls back to mingo.
import type { Document } from "bson";
import { compareValues, isPlainObject } from "./bson-order.ts";
import { bsonTypeName } from "../bson/bson-type-names.ts";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import { formatValue } from "../bson/format.ts";
import { arithmetic, numericType, zeroOf } from "../bson/numbers.ts";
import type { Collation } from "./collation.ts";
import { pulledArray } from "./update-pull.ts";

/** What numberUpdate answers for Decimal128 arithmetic, which mingo does. */
const NOT_HERE = Symbol("not here");

const FAST_OPERATORS = new Set(["$set", "$unset", "$inc", "$mul", "$min", "$max", "$currentDate", "$setOnInsert", "$push", "$pull"]);

/**
 * What a $push appends (its argument, or the list of `{$each: [...]}`) and the integer $slice it keeps, if any;
 * undefined for other modifiers ($sort, $position), left to mingo.
 */
function pushSpec(arg: unknown): { values: unknown[]; slice?: number } | undefined {
  if (!isPlainObject(arg)) return { values: [arg] };
  const keys = Object.keys(arg);
  if (!keys.some((k) => k.startsWith("$"))) return { values: [arg] };
  if (!Array.isArray(arg.$each)) return undefined;
  if (keys.length === 1) return { values: arg.$each };
  if (keys.length === 2 && Object.hasOwn(arg, "$slice") && Number.isInteger(arg.$slice)) return { values: arg.$each, slice: arg.$slice as number };
  return undefined;
}

/** `parents`: the path's fields above `field`, the one the operator changes; `dotted`: the whole path. */
type Op = [op: string, parents: string[], field: string, dotted: string, arg: unknown];

/**
 * Returns the updated document and whether it changed, or undefined when this path cannot apply the update.
 * `collation`: the statement's, which $pull's comparisons follow.
 */
export function applyFastUpdate(
  doc: Document,
  update: Document,
  inserting: boolean,
  collation?: Collation,
): { doc: Document; modified: boolean } | undefined {
  const ops: Op[] = [];
  for (const op of Object.keys(update)) {
    if (!FAST_OPERATORS.has(op)) return undefined;
    if (op === "$setOnInsert" && !inserting) continue;
    const fields = update[op] as Document;
    for (const path of Object.keys(fields)) {
      if (path.includes("$") || path === "" || path.split(".").some((p) => p === "" || /^\d+$/.test(p))) return undefined;
      const arg = fields[path];
      if (op === "$currentDate" && arg !== true && !(isPlainObject(arg) && arg.$type === "date")) return undefined;
      if (op === "$push" && pushSpec(arg) === undefined) return undefined;
      const parents = path.split(".");
      const field = parents.pop()!; // split gives at least one part
      ops.push([op, parents, field, path, arg]);
    }
  }
  // Every object on a modified path must be a plain object (or missing), else mingo handles array traversal.
  for (const [, parents] of ops) {
    let cur: unknown = doc;
    for (const part of parents) {
      cur = (cur as Document)[part];
      if (cur === undefined) break;
      if (!isPlainObject(cur)) return undefined;
    }
  }
  const root: Document = { ...doc };
  const copied = new Set<Document>([root]);
  let modified = false;
  const now = new Date();
  for (const [op, parents, field, dotted, arg] of ops) {
    // Walk down, copying each object on the path once (copy-on-write).
    let parent = root;
    let missingParent = false;
    for (const part of parents) {
      const next = parent[part];
      if (next === undefined) {
        // Neither creates the path: nothing to remove.
        if (op === "$unset" || op === "$pull") {
          missingParent = true;
          break;
        }
        const created: Document = {};
        copied.add(created);
        parent[part] = created;
        parent = created;
      } else {
        let child = next as Document;
        if (!copied.has(child)) {
          child = { ...child };
          copied.add(child);
          parent[part] = child;
        }
        parent = child;
      }
    }
    if (missingParent) continue;
    const has = Object.hasOwn(parent, field);
    const current = parent[field];
    let next: unknown;
    switch (op) {
      case "$set":
      case "$setOnInsert":
        next = arg;
        break;
      case "$unset":
        if (has) {
          delete parent[field];
          modified = true;
        }
        continue;
      case "$pull":
        if (!has) continue;
        next = pulledArray(current, arg, collation);
        if (next === current) continue;
        break;
      case "$inc":
      case "$mul":
      case "$min":
      case "$max":
        next = numberUpdate(op, has, current, arg, doc, dotted, field);
        if (next === NOT_HERE) return undefined; // Decimal128: mingo
        break;
      case "$currentDate":
        next = now;
        break;
      case "$push": {
        const { values, slice } = pushSpec(arg)!;
        if (has && !Array.isArray(current)) {
          throw commandError(
            ErrorCodes.BadValue,
            `The field '${field}' must be an array but is of type ${bsonTypeName(current)} in document {_id: ${formatValue(doc._id)}}`,
          );
        }
        if (has && values.length === 0 && slice === undefined) continue;
        const pushed = has ? [...(current as unknown[]), ...values] : [...values];
        // $slice keeps the first n elements, or the last -n.
        next = slice === undefined ? pushed : slice >= 0 ? pushed.slice(0, slice) : pushed.slice(Math.max(0, pushed.length + slice));
        break;
      }
    }
    if (!has || !sameStoredValue(current, next)) {
      parent[field] = next;
      modified = true;
    }
  }
  return { doc: modified ? root : doc, modified };
}

/**
 * The value `$inc`, `$mul`, `$min` or `$max` (`op`) with `arg` writes over `current` (`has`: the field exists) at
 * `dotted` (last part `field`) of `doc`, typed as mongod types it; NOT_HERE for Decimal128 arithmetic.
 */
export function numberUpdate(op: string, has: boolean, current: unknown, arg: unknown, doc: Document, dotted: string, field: string): unknown {
  if (op === "$min") return !has || compareValues(arg, current) < 0 ? arg : current;
  if (op === "$max") return !has || compareValues(arg, current) > 0 ? arg : current;
  const argType = numericType(arg);
  if (argType === undefined) {
    throw commandError(
      ErrorCodes.TypeMismatch,
      `Cannot ${op === "$inc" ? "increment" : "multiply"} with non-numeric argument: {${dotted}: ${formatValue(arg)}}`,
    );
  }
  // A missing field gets the argument ($inc) or a zero of its type ($mul), as mongod writes them.
  if (!has) return op === "$inc" ? arg : zeroOf(arg);
  const currentType = numericType(current);
  if (currentType === undefined) {
    throw commandError(
      ErrorCodes.TypeMismatch,
      `Cannot apply ${op} to a value of non-numeric type. {_id: ${formatValue(doc._id)}} has the field '${field}' of non-numeric type ${bsonTypeName(current)}`,
    );
  }
  if (argType === "decimal" || currentType === "decimal") return NOT_HERE;
  const next = arithmetic(op === "$inc" ? "add" : "multiply", current, arg);
  if (next === undefined) {
    // mongod names $inc in this message for $mul too.
    const shell = currentType === "long" ? "NumberLong" : "NumberInt";
    throw commandError(
      ErrorCodes.BadValue,
      `Failed to apply $inc operations to current value ((${shell})${String(current)}) for document {_id: ${formatValue(doc._id)}}`,
    );
  }
  return next;
}

/** Whether numberUpdate left the operator to mingo. */
export function leftToMingo(v: unknown): boolean {
  return v === NOT_HERE;
}

/**
 * Whether writing `b` over `a` leaves the stored bytes as they were (how mongod decides a field, and nModified,
 * changed). Embedded documents compare field names in order, so a reordered object counts as a change; a number of
 * another BSON type is a change too, at any depth.
 */
export function sameStoredValue(a: unknown, b: unknown): boolean {
  return typeof a === typeof b && compareValues(a, b) === 0 && sameNumberTypes(a, b);
}

/** Whether two values equal by comparison hold their numbers with the same BSON types. */
function sameNumberTypes(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const t = numericType(a);
  if (t !== undefined) return t === numericType(b);
  if (Array.isArray(a)) return Array.isArray(b) && a.every((x, i) => sameNumberTypes(x, b[i]));
  if (!isPlainObject(a) || !isPlainObject(b)) return true;
  return Object.keys(a).every((k) => sameNumberTypes(a[k], b[k]));
}
