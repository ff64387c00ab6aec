// Query operators over numbers of every BSON type (numbers.ts): mongod compares int32, int64 and double by value,
// so `{a: 5}` matches a stored Long 5 or Double 5.0, while `$type` tells them apart. mingo knows only JS numbers:
// equality with a value holding a number is decided here by BSON comparison, `$type`'s numeric aliases by the type
// a value is held with, and `$expr` evaluates over plain numbers.
import { plainNumbers, numericType, type NumericType } from "../bson/numbers.ts";
import { compareValues, isPlainObject, valuesAtPath } from "./bson-order.ts";
import { candidates } from "./simple-filter.ts";
import { inPlainOperator } from "./typed-arithmetic.ts";

export type QueryOp = (selector: string, value: unknown, options: unknown) => (doc: unknown) => boolean;
type NumberOperatorName = "$eq" | "$ne" | "$in" | "$nin" | "$type" | "$expr";

/** Whether a value is, or holds at any depth, a number. */
function holdsNumber(v: unknown): boolean {
  if (numericType(v) !== undefined) return true;
  if (Array.isArray(v)) return v.some(holdsNumber);
  return isPlainObject(v) && Object.values(v).some(holdsNumber);
}

function equalTest(selector: string, value: unknown): (doc: unknown) => boolean {
  return (doc) => candidates(doc, selector).some((c) => compareValues(c, value) === 0);
}

/** mongod's `$type` names and codes of the numeric types; "number" is any of them. */
const NUMERIC_ALIASES = new Map<unknown, NumericType[]>([
  ["double", ["double"]],
  [1, ["double"]],
  ["int", ["int"]],
  [16, ["int"]],
  ["long", ["long"]],
  [18, ["long"]],
  ["decimal", ["decimal"]],
  [19, ["decimal"]],
  ["number", ["int", "long", "double", "decimal"]],
]);

/** `$type`'s name and code of an ObjectId, which mingo does not know as one (bson's class is not its own). */
const OBJECT_ID_ALIASES = new Set<unknown>(["objectId", 7]);

/** `base` (mingo's operators, or a collation's) with equality, `$type` and `$expr` made number-aware. */
export function numberAwareOperators(base: Record<NumberOperatorName, QueryOp>): Record<NumberOperatorName, QueryOp> {
  const $eq: QueryOp = (selector, value, options) => (holdsNumber(value) ? equalTest(selector, value) : base.$eq(selector, value, options));
  const $in: QueryOp = (selector, value, options) => {
    if (!Array.isArray(value) || !value.some(holdsNumber)) return base.$in(selector, value, options);
    const numeric = value.filter(holdsNumber);
    const rest = value.filter((v) => !holdsNumber(v));
    const others = rest.length ? base.$in(selector, rest, options) : () => false;
    const tests = numeric.map((v) => equalTest(selector, v));
    return (doc) => tests.some((t) => t(doc)) || others(doc);
  };
  // As mongod: each value at the path and each element of an array there is tested (an array also matches
  // "array"; a missing field matches nothing). Types other than numbers and ObjectId are mingo's, each value shown
  // alone with plain numbers (it would take a Long or a Double for an object).
  const $type: QueryOp = (selector, value, options) => {
    const wanted = (Array.isArray(value) ? value : [value]).map((w) => plainNumbers(w));
    const numeric = new Set(wanted.flatMap((w) => NUMERIC_ALIASES.get(w) ?? []));
    const objectId = wanted.some((w) => OBJECT_ID_ALIASES.has(w));
    const rest = wanted.filter((w) => !NUMERIC_ALIASES.has(w) && !OBJECT_ID_ALIASES.has(w));
    const others = rest.length ? base.$type("v", rest.length === 1 ? rest[0] : rest, options) : () => false;
    const ofType = (v: unknown) =>
      numeric.has(numericType(v)!) || (objectId && (v as { _bsontype?: unknown } | null)?._bsontype === "ObjectId") || others({ v: plainNumbers(v) });
    return (doc) => valuesAtPath(doc, selector).some((v) => ofType(v) || (Array.isArray(v) && v.some(ofType)));
  };
  return {
    $eq,
    $ne: (selector, value, options) => {
      const equal = $eq(selector, value, options);
      return (doc) => !equal(doc);
    },
    $in,
    $nin: (selector, value, options) => {
      const within = $in(selector, value, options);
      return (doc) => !within(doc);
    },
    $type,
    $expr: (selector, value, options) => {
      const test = base.$expr(selector, value, options);
      // A filter decides by values: arithmetic inside it answers plain numbers (a Long 0 would be a true object).
      return (doc) => inPlainOperator(() => test(plainNumbers(doc)));
    },
  };
}
