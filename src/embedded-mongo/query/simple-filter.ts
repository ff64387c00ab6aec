// Filters made only of comparisons of fields with plain values ({a: 1, "b.c": {$gte: 2, $ne: "x"}, d: {$in: [...]}})
// are the shape of nearly every filter an application sends, and compiling a mingo query for each costs more than
// running it. Such a filter is tested here directly, with the query matcher's semantics: a field's candidates are
// the values at its path and the elements of arrays found there; ranges compare within one BSON type bracket.
// `$or`/`$and` of such filters, equality with null on a top-level field and `$type` of a top-level field with a
// non-numeric type (a partial index's usual filter) are tested here too. Anything else (null on a dotted path,
// regular expressions, documents or arrays as values, other operators, numeric path parts, a collation) is left to
// the query matcher.
import type { Document } from "bson";
import { compareValues, isPlainObject, typeRank, valuesAtParts } from "./bson-order.ts";

/** The values a comparison looks at: each value at the path, and each element of arrays found there. */
export function candidates(doc: unknown, path: string): unknown[] {
  return candidatesAt(doc, path.split("."));
}

function candidatesAt(doc: unknown, parts: string[]): unknown[] {
  const found = valuesAtParts(doc, parts);
  if (found.length === 0) return [null]; // missing compares like null
  const out: unknown[] = [];
  for (const v of found) {
    out.push(v);
    if (Array.isArray(v)) out.push(...v);
  }
  return out;
}

type Test = (doc: Document) => boolean;

/** A value compared as itself: a string, a finite number of any BSON type, a boolean, a valid date or an ObjectId. */
function isPlainValue(v: unknown): boolean {
  switch (typeof v) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(v);
    default: {
      const type = (v as { _bsontype?: unknown } | null)?._bsontype;
      return (v instanceof Date && !Number.isNaN(v.getTime())) || type === "ObjectId" || type === "Long" || type === "Double";
    }
  }
}

function equalsAny(parts: string[], values: unknown[]): Test {
  return (doc) => candidatesAt(doc, parts).some((c) => values.some((v) => typeRank(c) === typeRank(v) && compareValues(c, v) === 0));
}

function range(parts: string[], value: unknown, accept: (order: number) => boolean): Test {
  const rank = typeRank(value);
  return (doc) => candidatesAt(doc, parts).some((c) => typeRank(c) === rank && accept(compareValues(c, value)));
}

/**
 * Equality with null on a top-level field: the field is missing, null (or undefined), or an array holding null.
 * (On a dotted path, documents inside arrays lacking the field match too: left to the query matcher.)
 */
function equalsNull(parts: string[]): Test {
  return (doc) => {
    const found = valuesAtParts(doc, parts);
    if (found.length === 0) return true;
    return found.some((v) => v === null || v === undefined || (Array.isArray(v) && v.some((e) => e === null || e === undefined)));
  };
}

/** `$type`'s names and codes of the types told here by the value alone (numbers' types are the matcher's). */
const TYPE_TESTS = new Map<unknown, (v: unknown) => boolean>([
  ["string", (v) => typeof v === "string"],
  [2, (v) => typeof v === "string"],
  ["bool", (v) => typeof v === "boolean"],
  [8, (v) => typeof v === "boolean"],
  ["date", (v) => v instanceof Date],
  [9, (v) => v instanceof Date],
  ["objectId", (v) => (v as { _bsontype?: unknown } | null)?._bsontype === "ObjectId"],
  [7, (v) => (v as { _bsontype?: unknown } | null)?._bsontype === "ObjectId"],
]);

/**
 * `$type` of a top-level field: its value is of one of the types, or an array with an element of one of them (a
 * missing field matches none). Undefined for a dotted path or any other type.
 */
function typeTest(parts: string[], arg: unknown): Test | undefined {
  const [field] = parts;
  if (parts.length !== 1 || field === undefined) return undefined;
  const tests = (Array.isArray(arg) ? arg : [arg]).map((alias) => TYPE_TESTS.get(alias));
  if (tests.length === 0 || tests.some((t) => t === undefined)) return undefined;
  const ofType = (v: unknown) => tests.some((t) => t!(v)); // all defined, checked above
  return (doc) => {
    const v = doc[field];
    return Array.isArray(v) ? v.some(ofType) : v !== undefined && ofType(v);
  };
}

/** The test of one operator of a field, or undefined when its argument is not a plain value (or list of them). */
function operatorTest(parts: string[], op: string, arg: unknown): Test | undefined {
  if (op === "$type") return typeTest(parts, arg);
  if (op === "$eq" && arg === null && parts.length === 1) return equalsNull(parts);
  if (op === "$in" || op === "$nin") {
    if (!Array.isArray(arg) || !arg.every(isPlainValue)) return undefined;
    const any = equalsAny(parts, arg);
    return op === "$in" ? any : (doc) => !any(doc);
  }
  if (!isPlainValue(arg)) return undefined;
  switch (op) {
    case "$eq":
      return equalsAny(parts, [arg]);
    case "$ne": {
      const equal = equalsAny(parts, [arg]);
      return (doc) => !equal(doc);
    }
    case "$gt":
      return range(parts, arg, (o) => o > 0);
    case "$gte":
      return range(parts, arg, (o) => o >= 0);
    case "$lt":
      return range(parts, arg, (o) => o < 0);
    case "$lte":
      return range(parts, arg, (o) => o <= 0);
    default:
      return undefined;
  }
}

/** The test of `filter` when it is a plain comparison filter; undefined for any other filter. */
export function compileSimpleFilter(filter: Document): Test | undefined {
  const tests: Test[] = [];
  for (const [path, condition] of Object.entries(filter)) {
    if (path === "$or" || path === "$and") {
      if (!Array.isArray(condition) || condition.length === 0) return undefined;
      const clauses: Test[] = [];
      for (const clause of condition) {
        const test = isPlainObject(clause) ? compileSimpleFilter(clause) : undefined;
        if (!test) return undefined;
        clauses.push(test);
      }
      tests.push(path === "$or" ? (doc) => clauses.some((test) => test(doc)) : (doc) => clauses.every((test) => test(doc)));
      continue;
    }
    if (path === "" || path.startsWith("$")) return undefined;
    const parts = path.split(".");
    if (parts.some((p) => p === "" || /^\d+$/.test(p))) return undefined;
    if (isPlainValue(condition)) {
      tests.push(equalsAny(parts, [condition]));
      continue;
    }
    if (condition === null && parts.length === 1) {
      tests.push(equalsNull(parts));
      continue;
    }
    if (!isPlainObject(condition)) return undefined;
    const operators = Object.entries(condition);
    if (operators.length === 0 || !operators.every(([op]) => op.startsWith("$"))) return undefined;
    for (const [op, arg] of operators) {
      const test = operatorTest(parts, op, arg);
      if (!test) return undefined;
      tests.push(test);
    }
  }
  return (doc) => tests.every((test) => test(doc));
}
