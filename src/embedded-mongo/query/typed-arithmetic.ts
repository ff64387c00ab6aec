// Aggregation arithmetic, and the values operators pass along ($cond, $map...), typed as mongod types them. mingo
// computes with JS numbers, and a JS number's BSON type is decided when it is written (an integral one in the int32
// range becomes an int32), so `$divide: [6, 3]` would come back an int32 and a sum of doubles holding integers an int32. The operators here compute from the typed values
// instead: a field path is read from the typed document the stage's plain copy was made from (`typedOrigin`), a
// literal from the pipeline as sent (`prepareExpressions` keeps each typed operator's arguments as given), and the
// result is an int32 (a JS number), an int64 (Long) or a double (a JS number, or a Double when integral) by mongod's
// rules: int32 with int32 stays int32 until it overflows into an int64, an int64 overflows into a double, anything
// with a double is a double; $divide, $sqrt, $exp, $ln, $log, $log10, $avg, $stdDev* and trigonometry answer
// doubles. Decimal128 arithmetic is refused (238) rather than answered with another type.
//
// mingo's own operators read plain numbers: one of them that evaluates a typed operator (`{$toString: {$add: ...}}`)
// gets the result as a plain number (`inPlainOperator`), as does a stage that compares or groups by it.
import { EJSON, Long, type Document } from "bson";
import { evalExpr } from "mingo/core";
import * as accumulatorOperators from "mingo/operators/accumulator";
import * as expressionOperators from "mingo/operators/expression";
import { resolve } from "mingo/util";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import { exact, fitsInt64, heldDouble, INT64_MIN, integerOf, numericType, plainNumbers } from "../bson/numbers.ts";
import { compareValues, isPlainObject } from "./bson-order.ts";
import type { StringCompare } from "./collation.ts";

type ExprOp = (obj: unknown, expr: unknown, options: unknown) => unknown;
type AccOp = (coll: unknown[], expr: unknown, options: unknown) => unknown;

/** Each plain copy made for mingo (plainNumbers with origins), mapped to the typed container it copies. */
const ORIGINS = new WeakMap<object, object>();

/** The typed container a plain copy was made from (the value itself when it was not copied). */
function typedOrigin(v: unknown): unknown {
  return v !== null && typeof v === "object" ? (ORIGINS.get(v) ?? v) : v;
}

/** plainNumbers of a document, remembering the typed container behind each copy for the typed operators. */
export function plainWithOrigins<T>(v: T): T {
  return plainNumbers(v, ORIGINS);
}

/** A document a stage passed through unchanged, as stored (its numbers typed); any other document as it is. */
export function storedDocument(doc: Document): Document {
  return (ORIGINS.get(doc) as Document | undefined) ?? doc;
}

// How many of mingo's own operators are being evaluated: a typed operator inside one answers a plain number.
let plainDepth = 0;

/** Runs `f` with typed operators answering plain numbers (for mingo code that compares or groups by them). */
export function inPlainOperator<T>(f: () => T): T {
  plainDepth++;
  try {
    return f();
  } finally {
    plainDepth--;
  }
}

function answer(v: unknown): unknown {
  return plainDepth > 0 ? plainNumbers(v) : v;
}

/** A typed operator's arguments as sent: its literal numbers keep their types (plainNumbers leaves this alone). */
class TypedArgs {
  constructor(readonly args: unknown) {}
}

function notImplemented(op: string): never {
  throw commandError(ErrorCodes.NotImplemented, `${op} of a Decimal128 is not supported by the embedded server`);
}

type Width = "int" | "long" | "double";

function widest(a: Width, b: Width): Width {
  return a === "double" || b === "double" ? "double" : a === "long" || b === "long" ? "long" : "int";
}

/** The width a number computes at; Decimal128 arithmetic is refused. */
function widthOf(v: unknown, op: string): Width {
  const t = numericType(v);
  if (t === "decimal") notImplemented(op);
  return t as Width;
}

/** An int32 or int64 as an exact integer. */
function big(v: unknown): bigint {
  return BigInt(exact(v));
}

function double(v: unknown): number {
  return Number(exact(v));
}

/** A sum as mongod's $add and $sum keep it: exact integers until an int64 would overflow, then a double. */
function sumOf(values: unknown[], op: string): unknown {
  // int32s alone (the usual case) add up exactly as JS numbers: fewer than 2^22 of them stay within 2^53.
  if (values.length < 4_194_304 && values.every((v) => typeof v === "number" && numericType(v) === "int")) {
    let n = 0;
    for (const v of values) n += v as number;
    return n >= -2147483648 && n <= 2147483647 ? n : Long.fromNumber(n);
  }
  let width: Width = "int";
  let total = 0n;
  let doubleTotal = 0;
  for (const v of values) {
    const was = width;
    width = widest(width, widthOf(v, op));
    if (width === "double") {
      if (was !== "double") doubleTotal = Number(total);
      doubleTotal += double(v);
      continue;
    }
    const next = total + big(v);
    if (fitsInt64(next)) total = next;
    else {
      width = "double";
      doubleTotal = Number(total) + double(v);
    }
  }
  return width === "double" ? heldDouble(doubleTotal) : integerOf(width, total);
}

/** A product as mongod's $multiply keeps it: the double product alongside, taken when an int64 would overflow. */
function productOf(values: unknown[]): unknown {
  let width: Width = "int";
  let product = 1n;
  let doubleProduct = 1;
  for (const v of values) {
    width = widest(width, widthOf(v, "$multiply"));
    doubleProduct *= double(v);
    if (width === "double") continue;
    const next = product * big(v);
    if (fitsInt64(next)) product = next;
    else width = "double";
  }
  return width === "double" ? heldDouble(doubleProduct) : integerOf(width, product);
}

/** mongod's $subtract of two numbers: an int64 overflowing gives the difference of the doubles. */
function differenceOf(a: unknown, b: unknown): unknown {
  const width = widest(widthOf(a, "$subtract"), widthOf(b, "$subtract"));
  if (width === "double") return heldDouble(double(a) - double(b));
  const d = big(a) - big(b);
  if (width === "long" && !fitsInt64(d)) return heldDouble(double(a) - double(b));
  return integerOf(width, d);
}

/** The value of an argument expression, its numbers typed. */
function typedValue(obj: unknown, expr: unknown, options: unknown): unknown {
  if (typeof expr !== "object" && (typeof expr !== "string" || !expr.startsWith("$"))) return expr;
  if (typeof expr === "string") {
    if (!expr.startsWith("$$")) return typedOrigin(resolve(typedOrigin(obj) as Document, expr.slice(1)));
    const variable = /^\$\$([^.]+)(?:\.(.+))?$/.exec(expr);
    const name = variable?.[1];
    const local = (options as { local?: { root?: unknown; typedVariables?: Document } }).local;
    // Variables bound by the typed operators ($let, $map...), then the command's `let` ones (runAggregation's).
    const bound =
      name === undefined
        ? undefined
        : [local?.typedVariables, (options as { options?: { typedVariables?: Document } }).options?.typedVariables].find(
            (vars) => vars && name in vars,
          );
    if (name === "ROOT" || name === "CURRENT" || bound) {
      const base = typedOrigin(name === "ROOT" ? (local?.root ?? obj) : name === "CURRENT" ? obj : bound![name!]);
      return typedOrigin(variable![2] === undefined ? base : resolve(base as Document, variable![2]));
    }
  } else if (expr instanceof TypedArgs) {
    return expr.args;
  } else if (isPlainObject(expr)) {
    const [key] = Object.keys(expr);
    const op = key === undefined ? undefined : TYPED_OPERATORS[key];
    if (op) return op(obj, (expr as Document)[key!], options, true);
    // An object of expressions: each field's value, a missing one left out.
    if (key !== undefined && !key.startsWith("$")) {
      const fields = Object.entries(expr).map(([k, e]) => [k, typedValue(obj, e, options)] as const);
      return Object.fromEntries(fields.filter(([, v]) => v !== undefined));
    }
  } else if (Array.isArray(expr)) {
    return expr.map((e) => typedValue(obj, e, options));
  } else if (expr === null || numericType(expr) !== undefined) {
    return expr;
  }
  // Anything else is mingo's to evaluate; a number it answers is typed by its value.
  return typedOrigin(inPlainOperator(() => evalExpr(obj, expr, options as never)));
}

/** The argument list of an operator: its arguments as sent when prepared, else the expression itself. */
function argsOf(expr: unknown): unknown {
  return expr instanceof TypedArgs ? expr.args : expr;
}

/** The arguments' values, typed. */
function typedArgs(obj: unknown, expr: unknown, options: unknown): unknown[] {
  const args = argsOf(expr);
  return Array.isArray(args) ? args.map((a) => typedValue(obj, a, options)) : [typedValue(obj, args, options)];
}

/** mingo's operator over the plain values of already evaluated arguments. */
function mingoOver(name: string, obj: unknown, values: unknown[], single: boolean, options: unknown): unknown {
  const literal = values.map((v) => ({ $literal: plainNumbers(v) }));
  const base = (expressionOperators as unknown as Record<string, ExprOp>)[name]!;
  return inPlainOperator(() => base(obj, single ? literal[0] : literal, options));
}

type TypedOperator = (obj: unknown, expr: unknown, options: unknown, typed?: boolean) => unknown;

/** $add, $subtract, $multiply over numbers; dates, nulls and other values are mingo's. */
function arithmetic(name: "$add" | "$subtract" | "$multiply"): TypedOperator {
  return (obj, expr, options, typed) => {
    const values = typedArgs(obj, expr, options);
    const types = values.map(numericType);
    let out: unknown;
    if (values.length > 0 && types.every((t) => t !== undefined) && (name !== "$subtract" || values.length === 2)) {
      out = name === "$add" ? sumOf(values, name) : name === "$multiply" ? productOf(values) : differenceOf(values[0], values[1]);
    } else if ((out = name === "$add" ? dateSum(values) : undefined) === undefined) {
      if (types.includes("decimal")) notImplemented(name);
      const r = mingoOver(name, obj, values, false, options);
      // A date minus a date is a number of milliseconds: an int64 in mongod.
      const dates = name === "$subtract" && values.length === 2 && values.every((v) => v instanceof Date);
      out = dates && typeof r === "number" ? Long.fromNumber(r) : r;
    }
    return typed ? out : answer(out);
  };
}

/** One date plus numbers (a double rounded to the nearest millisecond, halves away from zero), else undefined. */
function dateSum(values: unknown[]): Date | undefined {
  let ms: number | undefined;
  let sum = 0;
  for (const v of values) {
    if (v instanceof Date) {
      if (ms !== undefined) return undefined;
      ms = v.getTime();
      continue;
    }
    const t = numericType(v);
    if (t === undefined || t === "decimal") return undefined;
    const n = double(v);
    sum += t === "double" ? Math.sign(n) * Math.round(Math.abs(n)) : n;
  }
  return ms === undefined ? undefined : new Date(ms + sum);
}

/**
 * $ceil, $floor, $round, $trunc: mingo's value, of its argument's type (an int32 rounded beyond its range is an
 * int64); an integer is returned as it is where rounding cannot change it.
 */
function sameType(name: string): TypedOperator {
  return (obj, expr, options, typed) => {
    const values = typedArgs(obj, expr, options);
    const type = numericType(values[0]);
    if (type === "decimal") notImplemented(name);
    const single = !Array.isArray(argsOf(expr));
    // `{$trunc: x}` is `{$trunc: [x, 0]}` (mingo wants the place).
    if (single && (name === "$round" || name === "$trunc")) values.push(0);
    const place = values[1] === undefined ? 0 : Number(plainNumbers(values[1]));
    let out: unknown;
    if ((type === "int" || type === "long") && place >= 0 && values.length <= 2) out = values[0];
    else {
      const r = mingoOver(name, obj, values, single && values.length === 1, options);
      out = typeof r !== "number" || type === undefined ? r : type === "double" ? heldDouble(r) : integerOf(type, BigInt(r));
    }
    return typed ? out : answer(out);
  };
}

/** $abs: of its argument's type, an int32's absolute value beyond the int32 range an int64. */
const $abs: TypedOperator = (obj, expr, options, typed) => {
  const values = typedArgs(obj, expr, options);
  const type = numericType(values[0]);
  let out: unknown;
  if (type === "decimal") notImplemented("$abs");
  if (values.length !== 1 || type === undefined) out = mingoOver("$abs", obj, values, !Array.isArray(argsOf(expr)), options);
  else if (type === "double") out = heldDouble(Math.abs(double(values[0])));
  else {
    const n = big(values[0]);
    if (n === INT64_MIN) throw commandError(28680, "can't take $abs of long long min");
    out = integerOf(type, n < 0n ? -n : n);
  }
  return typed ? out : answer(out);
};

/** An operator answering a double for any numbers (a decimal only for decimals: not supported here). */
function doubleResult(name: string): TypedOperator {
  return (obj, expr, options, typed) => {
    const values = typedArgs(obj, expr, options);
    if (values.some((v) => numericType(v) === "decimal")) notImplemented(name);
    const r = mingoOver(name, obj, values, !Array.isArray(argsOf(expr)), options);
    const out = typeof r === "number" ? heldDouble(r) : r;
    return typed ? out : answer(out);
  };
}

/** An operator of two numbers computed by `compute` (given the wider width); anything else is mingo's. */
function binary(name: string, compute: (a: unknown, b: unknown, width: Width) => unknown): TypedOperator {
  return (obj, expr, options, typed) => {
    const values = typedArgs(obj, expr, options);
    const types = values.map(numericType);
    if (types.includes("decimal")) notImplemented(name);
    const numbers = values.length === 2 && types.every((t) => t !== undefined);
    const out = numbers ? compute(values[0], values[1], widest(types[0] as Width, types[1] as Width)) : mingoOver(name, obj, values, false, options);
    return typed ? out : answer(out);
  };
}

/** $mod: the widest type of its two numbers; a remainder keeps the dividend's sign (fmod), as mongod's. */
const $mod = binary("$mod", (a, b, width) => {
  if (double(b) === 0) throw commandError(16610, "can't $mod by zero");
  return width === "double" ? heldDouble(double(a) % double(b)) : integerOf(width, big(a) % big(b));
});

/** $divide: a double (a decimal for decimals: not supported here). */
const $divide = binary("$divide", (a, b) => {
  if (double(b) === 0) throw commandError(ErrorCodes.BadValue, "can't $divide by zero");
  return heldDouble(double(a) / double(b));
});

/**
 * $pow as mongod computes it: with a double a double; integers to a power give an int32 (int64 beyond its range,
 * or with an int64 operand) while the result fits an int64, else a double; 0 to a negative power is refused.
 */
const $pow = binary("$pow", (b, e, width) => {
  if (double(b) === 0 && double(e) < 0) throw commandError(28764, "$pow cannot take a base of 0 and a negative exponent");
  if (width === "double") return heldDouble(double(b) ** double(e));
  const base = big(b);
  const exp = big(e);
  if (base === 0n || base === 1n) return integerOf(width, exp === 0n ? 1n : base);
  if (base === -1n) return integerOf(width, exp % 2n === 0n ? 1n : -1n);
  const r = exp < 0n || exp > 63n ? undefined : base ** exp;
  return r !== undefined && fitsInt64(r) ? integerOf(width, r) : heldDouble(double(b) ** double(e));
});

/** The numbers an accumulator-style operator reads: one per document ($group, windows), or its arguments. */
function accumulated(obj: unknown, expr: unknown, options: unknown): unknown[] {
  if (Array.isArray(obj)) {
    // Accumulator form: `obj` is the group's documents; each is the root of its evaluation.
    const args = argsOf(expr);
    // A field path or a constant is read without evaluation options; anything else gets the document as its root.
    if (typeof args !== "object" && !(typeof args === "string" && args.startsWith("$$"))) return obj.map((doc) => typedValue(doc, args, options));
    const init = (options as { constructor: { init(o: unknown): { update(l: object): unknown } } }).constructor.init;
    return obj.map((doc) => typedValue(doc, args, init(options).update({ root: doc })));
  }
  const args = argsOf(expr);
  // Expression form: one argument resolving to an array means its elements; a list of arguments, each of them.
  if (Array.isArray(args) && args.length !== 1) return args.map((a) => typedValue(obj, a, options));
  const single = typedValue(obj, Array.isArray(args) ? args[0] : args, options);
  return Array.isArray(single) ? single : [single];
}

/** $sum: of the numbers only, int32 widening to int64 and then to double as it goes; 0 (an int32) without numbers. */
const $sum: TypedOperator = (obj, expr, options, typed) => {
  const out = sumOf(
    accumulated(obj, expr, options).filter((v) => numericType(v) !== undefined),
    "$sum",
  );
  return typed ? out : answer(out);
};

/** $avg: a double (null without numbers). */
const $avg: TypedOperator = (obj, expr, options, typed) => {
  let sum = 0;
  let count = 0;
  for (const v of accumulated(obj, expr, options)) {
    const type = numericType(v);
    if (type === undefined) continue;
    if (type === "decimal") notImplemented("$avg");
    sum += Number(plainNumbers(v));
    count++;
  }
  const out = count === 0 ? null : heldDouble(sum / count);
  return typed ? out : answer(out);
};

/** $min / $max: the least or greatest value in BSON order, as given (null and missing ignored). */
function extreme(sign: 1 | -1, strings?: StringCompare): TypedOperator {
  return (obj, expr, options, typed) => {
    let best: unknown = null;
    for (const v of accumulated(obj, expr, options)) {
      if (v === null || v === undefined) continue;
      if (best === null || compareValues(v, best, strings) * sign > 0) best = v;
    }
    return typed ? best : answer(best);
  };
}

/** $stdDevPop / $stdDevSamp: mingo's figure, a double. */
function deviation(name: "$stdDevPop" | "$stdDevSamp"): TypedOperator {
  return (obj, expr, options, typed) => {
    const values = accumulated(obj, expr, options).filter((v) => numericType(v) !== undefined);
    if (values.some((v) => numericType(v) === "decimal")) notImplemented(name);
    const base = (accumulatorOperators as unknown as Record<string, (c: unknown[], e: unknown, o: unknown) => unknown>)[name]!;
    const r = base(plainNumbers(values), null, options);
    const out = typeof r === "number" ? heldDouble(r) : r;
    return typed ? out : answer(out);
  };
}

/** Whether mongod takes a condition's value as true (mingo's rule), computed with plain numbers. */
function holds(obj: unknown, expr: unknown, options: unknown): boolean {
  const v = inPlainOperator(() => evalExpr(obj, expr, options as never));
  return !!v || v === "";
}

/** mingo's own operator `name` over the arguments (where they are not what the typed operator expects). */
function mingoOwn(name: string, obj: unknown, expr: unknown, options: unknown): unknown {
  const base = (expressionOperators as unknown as Record<string, ExprOp>)[name]!;
  return inPlainOperator(() => base(obj, plainNumbers(argsOf(expr)), options));
}

/** $cond, $ifNull, $switch: the chosen value as it is (a field's stored type, a typed operator's result). */
const $cond: TypedOperator = (obj, expr, options, typed) => {
  const args = argsOf(expr);
  let chosen: unknown;
  if (Array.isArray(args) && args.length === 3) chosen = holds(obj, args[0], options) ? args[1] : args[2];
  else if (isPlainObject(args)) chosen = holds(obj, args.if, options) ? args.then : args.else;
  else return mingoOwn("$cond", obj, expr, options);
  const out = typedValue(obj, chosen, options);
  return typed ? out : answer(out);
};

const $ifNull: TypedOperator = (obj, expr, options, typed) => {
  const args = argsOf(expr);
  if (!Array.isArray(args)) return mingoOwn("$ifNull", obj, expr, options);
  let out: unknown;
  for (const input of args) {
    out = typedValue(obj, input, options);
    if (out !== null && out !== undefined) break;
  }
  return typed ? out : answer(out);
};

const $switch: TypedOperator = (obj, expr, options, typed) => {
  const args = argsOf(expr);
  if (!isPlainObject(args) || !Array.isArray(args.branches) || !args.branches.every(isPlainObject)) return mingoOwn("$switch", obj, expr, options);
  const branch = (args.branches as Document[]).find((b) => holds(obj, b.case, options));
  // No branch and no default: mingo's answer.
  if (!branch && !("default" in args)) return mingoOwn("$switch", obj, expr, options);
  const out = typedValue(obj, branch ? branch.then : args.default, options);
  return typed ? out : answer(out);
};

/** A field path a stage writes as it is (`{$project: {n: "$stored"}}`): the stored value, typed. */
const $__value: TypedOperator = (obj, expr, options, typed) => {
  const out = typedValue(obj, argsOf(expr), options);
  return typed ? out : answer(out);
};

/** $first / $last: of a group's documents, or of an array. */
function end(name: "$first" | "$last"): TypedOperator {
  return (obj, expr, options, typed) => {
    let out: unknown;
    if (Array.isArray(obj)) {
      const doc = name === "$first" ? obj[0] : obj[obj.length - 1];
      out = doc === undefined ? null : (accumulated([doc], expr, options)[0] ?? null);
    } else {
      const values = typedValue(obj, argsOf(expr), options);
      if (!Array.isArray(values) || values.length === 0) return mingoOwn(name, obj, expr, options);
      out = name === "$first" ? values[0] : values[values.length - 1];
    }
    return typed ? out : answer(out);
  };
}

/** $push: each document's value (null where missing, as mingo answers). */
const $push: TypedOperator = (obj, expr, options) => {
  if (expr === null) return obj;
  // A pipeline's own $push has prepared arguments; mingo's ($setWindowFields gathering its documents) keeps mingo's.
  if (!(expr instanceof TypedArgs)) return (accumulatorOperators as unknown as Record<string, AccOp>).$push!(obj as unknown[], expr, options);
  return accumulated(obj, expr, options).map((v) => v ?? null);
};

/** $addToSet: each distinct value (equal numbers of different types are one), the first seen kept. */
function addToSet(strings?: StringCompare): TypedOperator {
  return (obj, expr, options) => {
    const out: unknown[] = [];
    for (const v of expr === null ? (obj as unknown[]) : accumulated(obj, expr, options).map((x) => x ?? null)) {
      if (!out.some((o) => compareValues(o, v, strings) === 0)) out.push(v);
    }
    return out;
  };
}
const $addToSet = addToSet();

/** $min, $max and $addToSet comparing strings under a collation (`strings`), typed as the others. */
export function collatedAccumulators(strings: StringCompare): Record<"$min" | "$max" | "$addToSet", ExprOp> {
  return { $min: extreme(-1, strings), $max: extreme(1, strings), $addToSet: addToSet(strings) };
}

/**
 * Options binding variables (`$$name`): mingo's operators read them plain, the typed operators typed. A ComputeOptions
 * is copied through its own class, so the evaluation's other settings stay.
 */
function withVariables(options: unknown, variables: Document): unknown {
  const init = (options as { constructor: { init(o: unknown): { update(l: object): unknown } } }).constructor.init;
  const typedBefore = (options as { local?: { typedVariables?: Document } }).local?.typedVariables;
  return init(options).update({ variables: plainNumbers(variables), typedVariables: { ...typedBefore, ...variables } });
}

/** $let: `in` with `vars` bound. */
const $let: TypedOperator = (obj, expr, options, typed) => {
  const args = argsOf(expr);
  if (!isPlainObject(args) || !isPlainObject(args.vars) || !("in" in args)) return mingoOwn("$let", obj, expr, options);
  const vars = Object.fromEntries(Object.entries(args.vars).map(([k, e]) => [k, typedValue(obj, e, options)]));
  const out = typedValue(obj, args.in, withVariables(options, vars));
  return typed ? out : answer(out);
};

/** The array `input` names (null for null or missing), or undefined when it is not one (mingo's error then). */
function inputArray(obj: unknown, args: Document, options: unknown): unknown[] | null | undefined {
  const input = typedValue(obj, args.input, options);
  if (input === null || input === undefined) return null;
  return Array.isArray(input) ? input : undefined;
}

/** $map: `in` for each element, bound to `as` (`this`). */
const $map: TypedOperator = (obj, expr, options, typed) => {
  const args = argsOf(expr);
  if (!isPlainObject(args) || !("in" in args) || (args.as !== undefined && typeof args.as !== "string")) return mingoOwn("$map", obj, expr, options);
  const input = inputArray(obj, args, options);
  if (input === undefined) return mingoOwn("$map", obj, expr, options);
  const as = (args.as as string | undefined) ?? "this";
  const out = input === null ? null : input.map((element) => typedValue(obj, args.in, withVariables(options, { [as]: element })) ?? null);
  return typed ? out : answer(out);
};

/** $filter: the elements, as they are, for which `cond` holds (at most `limit`). */
const $filter: TypedOperator = (obj, expr, options, typed) => {
  const args = argsOf(expr);
  if (!isPlainObject(args) || !("cond" in args) || (args.as !== undefined && typeof args.as !== "string") || args.limit !== undefined)
    return mingoOwn("$filter", obj, expr, options);
  const input = inputArray(obj, args, options);
  if (input === undefined) return mingoOwn("$filter", obj, expr, options);
  const as = (args.as as string | undefined) ?? "this";
  const out = input === null ? null : input.filter((element) => holds(obj, args.cond, withVariables(options, { [as]: element })));
  return typed ? out : answer(out);
};

/** $reduce: `in` over each element (`$$this`) and the value so far (`$$value`), from `initialValue`. */
const $reduce: TypedOperator = (obj, expr, options, typed) => {
  const args = argsOf(expr);
  if (!isPlainObject(args) || !("in" in args) || !("initialValue" in args)) return mingoOwn("$reduce", obj, expr, options);
  const input = inputArray(obj, args, options);
  if (input === undefined) return mingoOwn("$reduce", obj, expr, options);
  let out: unknown = null;
  if (input) {
    out = typedValue(obj, args.initialValue, options);
    for (const element of input) out = typedValue(obj, args.in, withVariables(options, { value: out, this: element }));
  }
  return typed ? out : answer(out);
};

/** $arrayElemAt: the element as it is (from the end for a negative index; missing beyond either end). */
const $arrayElemAt: TypedOperator = (obj, expr, options, typed) => {
  const args = argsOf(expr);
  if (!Array.isArray(args) || args.length !== 2) return mingoOwn("$arrayElemAt", obj, expr, options);
  const array = typedValue(obj, args[0], options);
  const index = plainNumbers(typedValue(obj, args[1], options));
  if (!Array.isArray(array) || typeof index !== "number" || !Number.isInteger(index)) return mingoOwn("$arrayElemAt", obj, expr, options);
  const out = array[index < 0 ? array.length + index : index];
  return typed ? out : answer(out);
};

/** $literal: the value as sent. */
const $literal: TypedOperator = (_obj, expr, _options, typed) => (typed ? argsOf(expr) : answer(argsOf(expr)));

/** $toDouble / $toLong / $toInt: mingo's conversion, typed as named. */
function conversion(name: "$toDouble" | "$toLong" | "$toInt", type: "double" | "long" | "int"): TypedOperator {
  return (obj, expr, options, typed) => {
    const values = typedArgs(obj, expr, options);
    if (numericType(values[0]) === "decimal") notImplemented(name);
    if (type === "long" && numericType(values[0]) === "long") return typed ? values[0] : answer(values[0]);
    const r = mingoOver(name, obj, values, !Array.isArray(argsOf(expr)), options);
    const out = typeof r !== "number" ? r : type === "double" ? heldDouble(r) : type === "long" ? Long.fromNumber(r) : r;
    return typed ? out : answer(out);
  };
}

const DOUBLE_RESULTS = [
  "$sqrt",
  "$exp",
  "$ln",
  "$log",
  "$log10",
  "$sin",
  "$cos",
  "$tan",
  "$asin",
  "$acos",
  "$atan",
  "$atan2",
  "$asinh",
  "$acosh",
  "$atanh",
  "$sinh",
  "$cosh",
  "$tanh",
  "$degreesToRadians",
  "$radiansToDegrees",
] as const;

const TYPED_OPERATORS: Record<string, TypedOperator> = {
  $add: arithmetic("$add"),
  $subtract: arithmetic("$subtract"),
  $multiply: arithmetic("$multiply"),
  $mod,
  $divide,
  $pow,
  $abs,
  ...Object.fromEntries(["$ceil", "$floor", "$round", "$trunc"].map((n) => [n, sameType(n)])),
  ...Object.fromEntries(DOUBLE_RESULTS.map((n) => [n, doubleResult(n)])),
  $sum,
  $avg,
  $min: extreme(-1),
  $max: extreme(1),
  $stdDevPop: deviation("$stdDevPop"),
  $stdDevSamp: deviation("$stdDevSamp"),
  $literal,
  $let,
  $map,
  $filter,
  $reduce,
  $arrayElemAt,
  $cond,
  $ifNull,
  $switch,
  $__value,
  $first: end("$first"),
  $last: end("$last"),
  $toDouble: conversion("$toDouble", "double"),
  $toLong: conversion("$toLong", "long"),
  $toInt: conversion("$toInt", "int"),
};

/** Operators that are accumulators as well as expressions ($group, $bucket, windows call them with the documents). */
const ACCUMULATING = ["$sum", "$avg", "$min", "$max", "$stdDevPop", "$stdDevSamp", "$first", "$last"] as const;
/** Accumulators only: called with the documents, or (expression use) with the values already computed. */
const ACCUMULATORS: Record<string, TypedOperator> = { $push, $addToSet };

/**
 * `base` (an expression operator table) with the typed operators (`collated`: $min and $max under a collation),
 * and every other operator evaluated as a plain one: a typed operator inside it answers a plain number.
 */
export function typedExpressionOperators(base: Record<string, ExprOp>, collated?: Record<"$min" | "$max", ExprOp>): Record<string, ExprOp> {
  const out: Record<string, ExprOp> = {};
  for (const [name, op] of Object.entries(base)) {
    // $function is left as it is: mingo's $setWindowFields writes each window's result through it.
    if (typeof op === "function") out[name] = name === "$function" ? op : (obj, expr, options) => inPlainOperator(() => op(obj, expr, options));
  }
  for (const [name, op] of Object.entries(TYPED_OPERATORS)) out[name] = (obj, expr, options) => op(obj, expr, options);
  if (collated) Object.assign(out, { $min: collated.$min, $max: collated.$max });
  // A value a stage groups or compares by (a $group _id, a $bucket groupBy), evaluated with plain numbers; a
  // $group's numeric keys remember the typed value they were first seen as.
  out.$__plain = (obj, expr, options) => {
    if (!firstKeys || plainDepth > 0) return inPlainOperator(() => evalExpr(obj, expr, options as never));
    const typed = typedValue(obj, expr, options);
    const plain = plainNumbers(typed);
    if (plain !== typed) {
      const key = typeof plain === "number" ? plain : groupKeyText(plain);
      if (!firstKeys.has(key)) firstKeys.set(key, typed);
    }
    return plain;
  };
  return out;
}

// The typed value each group key holding numbers was first seen as, while a $group runs (typedGroupKeys): a number
// under itself, a document or array under its canonical Extended JSON.
let firstKeys: Map<number | string, unknown> | undefined;

function groupKeyText(plain: unknown): string {
  return EJSON.stringify(plain, { relaxed: false });
}

/** A $group's documents with each `_id` holding numbers typed as the first document of its group had it, as mongod's. */
export function typedGroupKeys(run: () => Document[]): Document[] {
  const keys = new Map<number | string, unknown>();
  firstKeys = keys;
  try {
    const out = run();
    if (!keys.size) return out;
    return out.map((doc) => {
      const id = doc._id;
      const key = typeof id === "number" ? id : id !== null && typeof id === "object" ? groupKeyText(id) : undefined;
      return key !== undefined && keys.has(key) ? { ...doc, _id: keys.get(key) } : doc;
    });
  } finally {
    firstKeys = undefined;
  }
}

/** The typed accumulators, for `$group`, `$bucket` and `$setWindowFields`. */
export function typedAccumulators(): Record<string, ExprOp> {
  return { ...Object.fromEntries(ACCUMULATING.map((n) => [n, TYPED_OPERATORS[n]!])), ...ACCUMULATORS };
}

/**
 * A pipeline with the arguments of each typed operator kept as sent (literal numbers typed) and every other number
 * plain, and the literal numbers `$addFields`/`$set` write kept typed. A `$match` filter's query operators are left
 * alone (`$mod` there is the query operator): only its `$expr` holds expressions.
 */
export function prepareExpressions(pipeline: Document[]): Document[] {
  return pipeline.map(prepareStage);
}

function prepareStage(stage: Document): Document {
  const [name] = Object.keys(stage);
  if (name === "$match") return { $match: prepareFilter(stage.$match) };
  if ((name === "$addFields" || name === "$set") && isPlainObject(stage[name])) {
    return { [name]: Object.fromEntries(Object.entries(stage[name] as Document).map(([k, v]) => [k, prepareWritten(v)])) };
  }
  if (name === "$project" && isPlainObject(stage.$project)) return { $project: prepareProjection(stage.$project) };
  if (name === "$replaceWith") return { $replaceWith: prepareWritten(stage.$replaceWith) };
  if (name === "$replaceRoot" && isPlainObject(stage.$replaceRoot) && "newRoot" in stage.$replaceRoot)
    return { $replaceRoot: { ...stage.$replaceRoot, newRoot: prepareWritten(stage.$replaceRoot.newRoot) } };
  const prepared = prepareExpression(stage) as Document;
  // What a stage groups or buckets by is compared by mingo: it is computed with plain numbers.
  const key = name === undefined ? undefined : GROUPING_KEYS[name];
  const spec = name === undefined ? undefined : prepared[name];
  if (key && isPlainObject(spec) && key in spec) return { [name!]: { ...spec, [key]: { $__plain: spec[key] } } };
  return prepared;
}

const GROUPING_KEYS: Record<string, string> = { $group: "_id", $bucket: "groupBy", $bucketAuto: "groupBy", $setWindowFields: "partitionBy" };

/** A field path or variable whose value a stage writes: read typed. `$$REMOVE`, `$$NOW`... are mingo's. */
function isWrittenPath(v: unknown): v is string {
  return typeof v === "string" && v.startsWith("$") && !/^\$\$(REMOVE|NOW|CLUSTER_TIME|KEEP|PRUNE|DESCEND)(\.|$)/.test(v);
}

/** A `$project` specification: inclusions and exclusions (numbers, booleans) as they are, values as `$addFields`'. */
function prepareProjection(spec: Document): Document {
  return Object.fromEntries(
    Object.entries(spec).map(([k, v]) => {
      if (typeof v === "number" || typeof v === "boolean") return [k, v];
      if (isPlainObject(v) && !Object.keys(v)[0]?.startsWith("$")) return [k, prepareProjection(v)];
      return [k, numericType(v) !== undefined ? plainNumbers(v) : prepareWritten(v)];
    }),
  );
}

/** A value `$addFields` writes: a typed literal number stays as sent, a field's value is read typed. */
function prepareWritten(v: unknown): unknown {
  if (isWrittenPath(v)) return { $__value: new TypedArgs(v) };
  const t = numericType(v);
  if (t !== undefined) return t === "int" ? v : { $literal: new TypedArgs(v) };
  if (Array.isArray(v)) return v.map(prepareWritten);
  if (isPlainObject(v)) {
    const keys = Object.keys(v);
    if (keys[0]?.startsWith("$")) return prepareExpression(v);
    return Object.fromEntries(keys.map((k) => [k, prepareWritten((v as Document)[k])]));
  }
  return plainNumbers(v);
}

function prepareFilter(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(prepareFilter);
  if (!isPlainObject(v)) return plainNumbers(v);
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === "$expr" ? prepareExpression(x) : prepareFilter(x)]));
}

function prepareExpression(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(prepareExpression);
  if (!isPlainObject(v)) return plainNumbers(v);
  const entries = Object.entries(v);
  const [first] = entries;
  if (first && first[0] === "$match") return { $match: prepareFilter(first[1]) };
  if (first && (first[0] in TYPED_OPERATORS || first[0] in ACCUMULATORS)) {
    // The operator's own arguments, typed; a window's other fields (`window`) as any expression.
    const args = first[0] === "$literal" ? first[1] : typedArguments(first[1]);
    return Object.fromEntries([[first[0], new TypedArgs(args)], ...entries.slice(1).map(([k, x]) => [k, prepareExpression(x)])]);
  }
  return Object.fromEntries(entries.map(([k, x]) => [k, prepareExpression(x)]));
}

/** Arguments: literal numbers as sent (also inside literal arrays and objects), nested expressions prepared. */
function typedArguments(v: unknown): unknown {
  if (numericType(v) !== undefined) return v;
  if (Array.isArray(v)) return v.map(typedArguments);
  if (isPlainObject(v) && !Object.keys(v)[0]?.startsWith("$")) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typedArguments(x)]));
  return prepareExpression(v);
}
