// Numbers keep the BSON type they were sent with, as mongod stores them. In memory an int32 is a JS number, an
// int64 a bson Long (whatever its size), and a double a JS number, except a double holding an integer of the int32
// range: the serializer would write that number as an int32, so it stays a bson Double. Written back, each value
// then has the type it came with.
import { Double, Long, type Document } from "bson";

export type NumericType = "int" | "long" | "double" | "decimal";

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
export const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Whether the serializer writes this JS number as an int32. */
function isInt32(n: number): boolean {
  return Number.isInteger(n) && n >= INT32_MIN && n <= INT32_MAX && !Object.is(n, -0);
}

function bsonTypeOf(v: unknown): string | undefined {
  return v !== null && typeof v === "object" ? (v as { _bsontype?: string })._bsontype : undefined;
}

/** The BSON numeric type of a value as held here, or undefined for anything else. */
export function numericType(v: unknown): NumericType | undefined {
  if (typeof v === "number") return isInt32(v) ? "int" : "double";
  if (typeof v === "bigint") return "long";
  switch (bsonTypeOf(v)) {
    case "Int32":
      return "int";
    case "Long":
      return "long";
    case "Double":
      return "double";
    case "Decimal128":
      return "decimal";
    default:
      return undefined;
  }
}

/** A double as held here: a JS number, or a Double when the number would otherwise be written as an int32. */
export function heldDouble(n: number): number | Double {
  return isInt32(n) ? new Double(n) : n;
}

function isPlainContainer(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * Turns a document decoded with `promoteValues: false` (every number a bson wrapper) into the form above, in place:
 * int32 and symbols become JS values, doubles JS numbers unless integral in the int32 range, Longs stay.
 */
export function holdNumbers(doc: Document): Document {
  holdIn(doc);
  return doc;
}

function holdIn(container: Record<string, unknown> | unknown[]): void {
  for (const key of Object.keys(container)) {
    const v = (container as Record<string, unknown>)[key];
    if (v === null || typeof v !== "object") continue;
    const held = heldValue(v);
    if (held !== v) (container as Record<string, unknown>)[key] = held;
  }
}

function heldValue(v: object): unknown {
  switch (bsonTypeOf(v)) {
    case "Int32":
      return (v as { value: number }).value;
    case "Double": {
      const n = (v as { value: number }).value;
      return isInt32(n) ? v : n;
    }
    case "BSONSymbol":
      return (v as { value: string }).value;
    case undefined:
      if (Array.isArray(v) || isPlainContainer(v)) holdIn(v as Record<string, unknown>);
      return v;
    default:
      return v;
  }
}

/**
 * The value with every number a JS number (a Long beyond ±2^53 stays a Long), for code that computes with numbers
 * natively (mingo's expressions and accumulators). Copies only the containers holding a changed value; `origins`
 * (when given) maps each copy to the container it copies.
 */
export function plainNumbers<T>(v: T, origins?: WeakMap<object, object>): T {
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const p = plainNumbers(v[i], origins);
      if (p !== v[i]) (out ??= v.slice())[i] = p;
    }
    if (out && origins) origins.set(out, v);
    return (out ?? v) as T;
  }
  switch (bsonTypeOf(v)) {
    case "Int32":
    case "Double":
      return (v as unknown as { value: number }).value as T;
    case "Long": {
      const n = (v as unknown as Long).toNumber();
      return (Number.isSafeInteger(n) ? n : v) as T;
    }
    case undefined:
      break;
    default:
      return v;
  }
  if (!isPlainContainer(v)) return v;
  let out: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(v)) {
    const p = plainNumbers(value, origins);
    if (p !== value) (out ??= { ...(v as Record<string, unknown>) })[key] = p;
  }
  if (out && origins) origins.set(out, v);
  return (out ?? v) as T;
}

/**
 * `after` with the typed numbers of `before` put back where `after` holds the same number at the same path: what a
 * computation over plainNumbers(before) left unchanged keeps its type.
 */
export function restoreNumbers(before: unknown, after: unknown): unknown {
  if (typeof after === "number") {
    const t = numericType(before);
    return (t === "long" || t === "double") && typeof before === "object" && (plainNumbers(before) as unknown) === after ? before : after;
  }
  if (after === null || typeof after !== "object" || before === null || typeof before !== "object") return after;
  if (Array.isArray(after)) {
    if (!Array.isArray(before)) return after;
    let out: unknown[] | undefined;
    for (let i = 0; i < after.length && i < before.length; i++) {
      const r = restoreNumbers(before[i], after[i]);
      if (r !== after[i]) (out ??= after.slice())[i] = r;
    }
    return out ?? after;
  }
  if (Array.isArray(before) || !isPlainContainer(after) || !isPlainContainer(before)) return after;
  let out: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(after)) {
    if (!Object.hasOwn(before, key)) continue;
    const r = restoreNumbers((before as Record<string, unknown>)[key], value);
    if (r !== value) (out ??= { ...(after as Record<string, unknown>) })[key] = r;
  }
  return out ?? after;
}

/** A number's value: an int64 as an exact bigint, any other as a JS number. */
export function exact(v: unknown): bigint | number {
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return v;
  if (bsonTypeOf(v) === "Long") return (v as Long).toBigInt();
  return (v as { value: number }).value;
}

export function fitsInt64(n: bigint): boolean {
  return n >= INT64_MIN && n <= INT64_MAX;
}

/** An integer result: an int32 when it fits and the operands were int32 (mongod's createIntOrLong), else an int64. */
export function integerOf(width: "int" | "long", n: bigint): number | Long {
  return width === "int" && n >= BigInt(INT32_MIN) && n <= BigInt(INT32_MAX) ? Number(n) : Long.fromBigInt(n);
}

/** The result of $inc (`add`) or $mul on two numbers of these types, typed as mongod types it; undefined on int64 overflow. */
export function arithmetic(op: "add" | "multiply", a: unknown, b: unknown): unknown {
  const ta = numericType(a);
  const tb = numericType(b);
  if (ta === "double" || tb === "double") {
    const x = Number(exact(a));
    const y = Number(exact(b));
    return heldDouble(op === "add" ? x + y : x * y);
  }
  const x = BigInt(exact(a));
  const y = BigInt(exact(b));
  const r = op === "add" ? x + y : x * y;
  // int32 with int32 stays int32 while it fits and becomes int64 beyond; with an int64 it is int64.
  return fitsInt64(r) ? integerOf(ta === "int" && tb === "int" ? "int" : "long", r) : undefined;
}

/** Zero of a number's type: what $mul writes to a missing field. */
export function zeroOf(v: unknown): unknown {
  const t = numericType(v);
  return t === "long" ? Long.fromNumber(0) : t === "double" ? heldDouble(0) : 0;
}
