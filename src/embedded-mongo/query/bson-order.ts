// mongod's total order over BSON values (used by sorts and indexes): type brackets first, then values.
// MinKey < null/missing < numbers < strings < objects < arrays < binData < ObjectId < bool < date < timestamp < regex < MaxKey
import type { Document, Long } from "bson";
import type { StringCompare } from "./collation.ts";

export const TypeRank = {
  MinKey: 0,
  Null: 1,
  Number: 2,
  String: 3,
  Object: 4,
  Array: 5,
  BinData: 6,
  ObjectId: 7,
  Boolean: 8,
  Date: 9,
  Timestamp: 10,
  RegExp: 11,
  MaxKey: 12,
} as const;

/**
 * A bound sitting before (side -1) or after (side 1) every value of one type bracket; index range scans use it
 * so that `{$gt: 5}` scans numbers only, exactly like mongod's type-bracketed bounds.
 */
export class TypeBound {
  constructor(
    readonly rank: number,
    readonly side: -1 | 1,
  ) {}
}

export const MIN_BOUND = new TypeBound(TypeRank.MinKey, -1);
export const MAX_BOUND = new TypeBound(TypeRank.MaxKey, 1);

function bsonType(v: object): string | undefined {
  return (v as { _bsontype?: string })._bsontype;
}

export function typeRank(v: unknown): number {
  if (v === null || v === undefined) return TypeRank.Null;
  switch (typeof v) {
    case "number":
    case "bigint":
      return TypeRank.Number;
    case "string":
      return TypeRank.String;
    case "boolean":
      return TypeRank.Boolean;
    case "object":
      break;
    default:
      return TypeRank.Object;
  }
  if (Array.isArray(v)) return TypeRank.Array;
  if (v instanceof Date) return TypeRank.Date;
  if (v instanceof RegExp) return TypeRank.RegExp;
  if (v instanceof Uint8Array) return TypeRank.BinData;
  switch (bsonType(v as object)) {
    case "ObjectId":
      return TypeRank.ObjectId;
    case "Long":
    case "Int32":
    case "Double":
    case "Decimal128":
      return TypeRank.Number;
    case "BSONSymbol":
      return TypeRank.String;
    case "Binary":
      return TypeRank.BinData;
    case "Timestamp":
      return TypeRank.Timestamp;
    case "BSONRegExp":
      return TypeRank.RegExp;
    case "MinKey":
      return TypeRank.MinKey;
    case "MaxKey":
      return TypeRank.MaxKey;
    default:
      return TypeRank.Object;
  }
}

const cmp = (a: number | string | bigint, b: number | string | bigint): number => (a < b ? -1 : a > b ? 1 : 0);

/** Numbers of any BSON numeric type; int64 is compared exactly, not through a lossy double. */
function compareNumbers(a: unknown, b: unknown): number {
  if (typeof a === "number" && typeof b === "number") {
    if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : -1; // NaN sorts below every other number in mongod
    if (Number.isNaN(b)) return 1;
    return cmp(a, b);
  }
  const exact = (v: unknown): bigint | number => {
    if (typeof v === "bigint") return v;
    if (typeof v === "number") return Number.isInteger(v) ? BigInt(v) : v;
    const t = bsonType(v as object);
    if (t === "Long") return (v as Long).toBigInt();
    if (t === "Int32" || t === "Double") return exact((v as { value: number }).value);
    return exact(Number(String(v)));
  };
  const x = exact(a);
  const y = exact(b);
  if (typeof x === "bigint" && typeof y === "bigint") return cmp(x, y);
  if (typeof x === "number" && Number.isNaN(x)) return typeof y === "number" && Number.isNaN(y) ? 0 : -1;
  if (typeof y === "number" && Number.isNaN(y)) return 1;
  return cmp(Number(x), Number(y));
}

function binaryBytes(v: unknown): Uint8Array {
  if (v instanceof Uint8Array) return v;
  const b = v as { buffer: Uint8Array; position?: number };
  return b.buffer.subarray(0, b.position ?? b.buffer.length);
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** An ObjectId as bson 7 holds it: its twelve bytes as four numbers of three bytes each, in order. */
interface ObjectIdParts {
  i0?: number;
  i1?: number;
  i2?: number;
  i3?: number;
  id: Uint8Array;
}

/**
 * Two ObjectIds in the order of their bytes. bson 7's `id` builds a new buffer at every read, two per comparison,
 * and a search of the jobs' _id index (a job's removal, one per withdrawal) makes some twenty: its three-byte parts
 * compare the same without one.
 */
function compareObjectIds(a: ObjectIdParts, b: ObjectIdParts): number {
  if (typeof a.i0 === "number" && typeof b.i0 === "number") {
    return a.i0 - b.i0 || a.i1! - b.i1! || a.i2! - b.i2! || a.i3! - b.i3!;
  }
  return compareBytes(a.id, b.id);
}

/**
 * mongod's comparison of two BSON values; `strings` compares strings under a collation (binary without one).
 * Strings nested in arrays and documents are collated too; field names never are.
 */
export function compareValues(a: unknown, b: unknown, strings?: StringCompare): number {
  // Two values of one common type, as index keys nearly always are: compared at once, without ranking both
  // (an index insert compares a key's fields some 20 times); the same answers as the general path below.
  const type = typeof a;
  if (type === typeof b) {
    if (type === "string") return strings ? strings(a as string, b as string) : a === b ? 0 : (a as string) < (b as string) ? -1 : 1;
    if (type === "number") return compareNumbers(a, b);
    if (type === "boolean") return a === b ? 0 : a ? 1 : -1;
    if (a instanceof Date && b instanceof Date) return cmp(a.getTime(), b.getTime());
  }
  if (a instanceof TypeBound || b instanceof TypeBound) return compareWithBound(a, b);
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra - rb;
  switch (ra) {
    case TypeRank.Null:
    case TypeRank.MinKey:
    case TypeRank.MaxKey:
      return 0;
    case TypeRank.Number:
      return compareNumbers(a, b);
    case TypeRank.String:
      return strings ? strings(String(a), String(b)) : cmp(String(a), String(b));
    case TypeRank.Boolean:
      return cmp(Number(a), Number(b));
    case TypeRank.Date:
      return cmp((a as Date).getTime(), (b as Date).getTime());
    case TypeRank.ObjectId:
      return compareObjectIds(a as ObjectIdParts, b as ObjectIdParts);
    case TypeRank.Timestamp: {
      const x = a as Long;
      const y = b as Long;
      return cmp(x.high >>> 0, y.high >>> 0) || cmp(x.low >>> 0, y.low >>> 0);
    }
    case TypeRank.BinData: {
      const x = binaryBytes(a);
      const y = binaryBytes(b);
      if (x.length !== y.length) return x.length - y.length;
      const sa = (a as { sub_type?: number }).sub_type ?? 0;
      const sb = (b as { sub_type?: number }).sub_type ?? 0;
      return sa - sb || compareBytes(x, y);
    }
    case TypeRank.RegExp: {
      const x = a as { source?: string; pattern?: string; flags?: string; options?: string };
      const y = b as typeof x;
      return cmp(x.source ?? x.pattern ?? "", y.source ?? y.pattern ?? "") || cmp(x.flags ?? x.options ?? "", y.flags ?? y.options ?? "");
    }
    case TypeRank.Array: {
      const x = a as unknown[];
      const y = b as unknown[];
      const n = Math.min(x.length, y.length);
      for (let i = 0; i < n; i++) {
        const c = compareValues(x[i], y[i], strings);
        if (c) return c;
      }
      return x.length - y.length;
    }
    default:
      return compareObjects(a as Record<string, unknown>, b as Record<string, unknown>, strings);
  }
}

// Embedded documents compare element by element: type, then field name, then value (mongod's BSONObj order).
function compareObjects(a: Record<string, unknown>, b: Record<string, unknown>, strings?: StringCompare): number {
  const ka = Object.keys(a).filter((k) => a[k] !== undefined);
  const kb = Object.keys(b).filter((k) => b[k] !== undefined);
  const n = Math.min(ka.length, kb.length);
  for (let i = 0; i < n; i++) {
    const keyA = ka[i]!;
    const keyB = kb[i]!;
    const va = a[keyA];
    const vb = b[keyB];
    const c = typeRank(va) - typeRank(vb) || cmp(keyA, keyB) || compareValues(va, vb, strings);
    if (c) return c;
  }
  return ka.length - kb.length;
}

function compareWithBound(a: unknown, b: unknown): number {
  if (a instanceof TypeBound && b instanceof TypeBound) return a.rank - b.rank || a.side - b.side;
  if (a instanceof TypeBound) return -compareWithBound(b, a);
  const bound = b as TypeBound;
  const r = typeRank(a);
  return r !== bound.rank ? r - bound.rank : -bound.side;
}

export function valuesEqual(a: unknown, b: unknown, strings?: StringCompare): boolean {
  return compareValues(a, b, strings) === 0;
}

/** True when a value is or holds a string: only then can a collation change how it compares. */
export function containsString(v: unknown): boolean {
  if (typeof v === "string") return true;
  if (v === null || typeof v !== "object") return false;
  if (Array.isArray(v)) return v.some(containsString);
  const t = (v as { _bsontype?: string })._bsontype;
  if (t === "BSONSymbol") return true;
  if (t || v instanceof Date || v instanceof RegExp || v instanceof Uint8Array) return false;
  return Object.values(v).some(containsString);
}

/** A document as the driver decodes it: a plain object (not an array, a Date or a BSON value class). */
export function isPlainObject(v: unknown): v is Document {
  if (v === null || typeof v !== "object") return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * Every value reachable at a dotted path, descending through arrays the way mongod's index key generator does
 * (`a.b` over `{a: [{b: 1}, {b: 2}]}` yields 1 and 2; an array at the leaf is yielded whole).
 */
export function valuesAtPath(doc: unknown, path: string): unknown[] {
  return valuesAtParts(doc, path.split("."));
}

/** valuesAtPath with the path already split (index key generation runs this per write). */
export function valuesAtParts(doc: unknown, parts: string[]): unknown[] {
  const [only] = parts;
  if (parts.length === 1 && only !== undefined) {
    const v = doc !== null && typeof doc === "object" && !Array.isArray(doc) ? (doc as Record<string, unknown>)[only] : undefined;
    if (v !== undefined || !Array.isArray(doc)) return v === undefined ? [] : [v];
  }
  const out: unknown[] = [];
  collect(doc, parts, 0, out);
  return out;
}

function collect(value: unknown, parts: string[], i: number, out: unknown[]): void {
  const part = parts[i];
  if (part === undefined) {
    // past the last part: the value at the path
    out.push(value);
    return;
  }
  if (value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    if (/^\d+$/.test(part)) {
      if (Number(part) < value.length) collect(value[Number(part)], parts, i + 1, out);
      return;
    }
    for (const el of value) if (el !== null && typeof el === "object" && !Array.isArray(el)) collect(el, parts, i, out);
    return;
  }
  const next = (value as Record<string, unknown>)[part];
  if (next === undefined) return;
  collect(next, parts, i + 1, out);
}

/** The single value at a dotted path without array traversal (undefined when absent). */
export function valueAtPath(doc: unknown, path: string): unknown {
  let v: unknown = doc;
  for (const part of path.split(".")) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

/** Sort key of one field: arrays sort by their smallest element ascending, their largest descending (mongod). */
export function sortKey(doc: unknown, path: string, direction: number, strings?: StringCompare): unknown {
  const values = valuesAtPath(doc, path);
  let best: unknown;
  let found = false;
  for (const v of values) {
    const elements = Array.isArray(v) ? (v.length ? v : [undefined]) : [v];
    for (const el of elements) {
      if (!found || compareValues(el, best, strings) * direction < 0) {
        best = el;
        found = true;
      }
    }
  }
  return found ? best : null;
}

export type SortSpec = [string, number][];

export function parseSort(sort: unknown): SortSpec {
  if (!sort || typeof sort !== "object") return [];
  return Object.entries(sort as Record<string, unknown>).map(([k, v]) => [k, Number(v) < 0 ? -1 : 1]);
}

export function compareBySort(spec: SortSpec, strings?: StringCompare): (a: unknown, b: unknown) => number {
  return (a, b) => {
    for (const [path, dir] of spec) {
      const c = compareValues(sortKey(a, path, dir, strings), sortKey(b, path, dir, strings), strings);
      if (c) return c * dir;
    }
    return 0;
  };
}

/** Sorts documents, computing each sort key once (decorate-sort-undecorate). Stable, like mongod's. */
export function sortDocuments<T>(docs: T[], spec: SortSpec, strings?: StringCompare): T[] {
  if (spec.length === 0) return docs;
  const decorated = docs.map((doc, i) => ({ doc, i, keys: spec.map(([p, d]) => sortKey(doc, p, d, strings)) }));
  decorated.sort((x, y) => {
    for (let k = 0; k < spec.length; k++) {
      const c = compareValues(x.keys[k], y.keys[k], strings);
      if (c) return c * spec[k]![1];
    }
    return x.i - y.i;
  });
  return decorated.map((d) => d.doc);
}
