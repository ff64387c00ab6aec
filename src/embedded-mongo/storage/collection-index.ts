// One secondary (or _id) index: key generation as mongod does it (multikey, sparse, partial) over an ordered set.
import type { Document } from "bson";
import { compareValues, valuesAtParts } from "../query/bson-order.ts";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import { OrderedSet, type Position } from "./ordered-set.ts";
import { formatValue } from "../bson/format.ts";
import { compileFilter } from "../query/matcher.ts";
import { type Collation, parseCollation } from "../query/collation.ts";

/**
 * An index entry: its key's fields, then its record id, in one array. Every stored document holds one per index it
 * is in, for as long as it is stored: one object rather than an entry and its key's array spares the garbage
 * collector an object per index of every document (most of what a document holds beside its own fields). The
 * entry's leading fields are its key wherever a key is compared (compareKeys reads as many fields as the key it is
 * given has).
 */
export type IndexEntry = unknown[];

/** The record id of an index entry. */
export function entryRid(entry: IndexEntry): number {
  return entry[entry.length - 1] as number;
}

/** The entry of `key` for record `rid`. */
function indexEntry(key: unknown[], rid: number): IndexEntry {
  const length = key.length;
  // Allocated at its size, then filled: no backing store grown and left behind.
  const entry: unknown[] = new Array(length + 1);
  for (let i = 0; i < length; i++) entry[i] = key[i];
  entry[length] = rid;
  return entry;
}

export type IndexField = [path: string, direction: 1 | -1];

export class CollectionIndex {
  readonly name: string;
  readonly fields: IndexField[];
  private readonly fieldParts: string[][];
  /** The field names when every path is a top-level field (no dot), else null. */
  private readonly topLevelFields: readonly string[] | null;
  readonly unique: boolean;
  readonly sparse: boolean;
  readonly partialFilterExpression: Document | undefined;
  /** Changed in place by collMod, as are `hidden` and the spec fields they mirror. */
  expireAfterSeconds?: number;
  /** A hidden index is maintained but never chosen by the planner (mongod's `hidden: true`). */
  hidden: boolean;
  /** The spec as listIndexes reports it. */
  readonly spec: Document;
  readonly entries: OrderedSet<IndexEntry>;
  /** Set once any document produced several keys; multikey indexes cannot intersect range bounds or give order. */
  multikey = false;
  /**
   * Unique indexes also keep canonical key string -> record id, so a point lookup or a uniqueness check is one
   * hash probe instead of a walk down the ordered set (fewer cache misses on large collections).
   */
  private readonly hash?: Map<string, number>;
  /**
   * The hash's keys of one field holding a string (an _id of a string, the commonest), by the string itself: no
   * canonical string to build, copy and hash again, the decoded string's hash serving both probes of an insert.
   */
  private readonly stringHash?: Map<string, number>;
  /** Entries whose key has a value without a canonical string; while any exist the hash is not trusted. */
  private unhashable = 0;
  /**
   * The last key hashed and its canonical string: an insert checks a key's uniqueness and then adds the same key
   * (the same array), and the string, built and hashed by the map once, serves both.
   */
  private hashedKey: unknown[] | undefined;
  private hashedAs: string | undefined;
  /** The partial filter's test, compiled once (a plain filter such as `{field: {$type: "string"}}` tested directly). */
  private readonly partialQuery?: { test(doc: Document): boolean };
  /** The index's collation (spec.collation): its keys are ordered and compared under it. Undefined: binary. */
  readonly collation: Collation | undefined;
  /**
   * The top-level fields a document's keys depend on (the key paths and the partial filter's), or null when that
   * cannot be told. Stored documents are never changed in place, so a write that leaves each of these fields the
   * same value (the same object) leaves the keys as they were.
   */
  readonly dependsOn: ReadonlySet<string> | null;

  constructor(spec: Document) {
    this.spec = spec;
    this.name = String(spec.name);
    this.fields = Object.entries(spec.key as Document).map(([path, dir]) => [path, Number(dir) < 0 ? -1 : 1] as IndexField);
    this.fieldParts = this.fields.map(([path]) => path.split("."));
    this.topLevelFields = this.fieldParts.every((parts) => parts.length === 1) ? this.fieldParts.map(([field]) => field!) : null;
    this.unique = spec.unique === true || spec.name === "_id_";
    this.sparse = spec.sparse === true;
    this.partialFilterExpression = spec.partialFilterExpression as Document | undefined;
    this.collation = spec.collation === undefined ? undefined : (parseCollation(spec.collation) ?? undefined);
    const strings = this.collation?.compare;
    if (this.partialFilterExpression)
      this.partialQuery = { test: compileFilter(this.partialFilterExpression, undefined, this.collation) ?? (() => true) };
    if (typeof spec.expireAfterSeconds === "number") this.expireAfterSeconds = spec.expireAfterSeconds;
    this.hidden = spec.hidden === true;
    this.dependsOn = topLevelFields(
      this.fields.map(([path]) => path),
      this.partialFilterExpression,
    );
    // Keys equal under a collation have no canonical string: a collated index has no hash.
    if (this.unique && !this.collation) {
      this.hash = new Map();
      this.stringHash = new Map();
    }
    const dirs = this.fields.map(([, d]) => d);
    const firstDirection = dirs[0]!; // an index has at least one field
    const ridAt = dirs.length;
    this.entries = new OrderedSet<IndexEntry>(
      (a, b) => {
        const first = compareValues(a[0], b[0], strings);
        if (first) return first * firstDirection;
        for (let i = 1; i < ridAt; i++) {
          const c = compareValues(a[i], b[i], strings);
          if (c) return c * dirs[i]!;
        }
        return (a[ridAt] as number) - (b[ridAt] as number);
      },
      strings ? undefined : (e) => firstFieldRank(e[0], firstDirection),
    );
  }

  get keyPattern(): Document {
    return this.spec.key as Document;
  }

  /** Index keys of a document; empty when sparse/partial rules leave it out of the index. */
  keysFor(doc: Document): unknown[][] {
    if (this.partialQuery && !this.partialQuery.test(doc)) return [];
    return this.topLevelFields ? this.topLevelKeys(doc, this.topLevelFields) : this.keysAtPaths(doc);
  }

  /**
   * The key of an index on top-level fields, built in one array (the usual index, on every insert), when none of
   * them holds an array; otherwise the general path's keys.
   */
  private topLevelKeys(doc: Document, fields: readonly string[]): unknown[][] {
    const key: unknown[] = new Array(fields.length);
    let present = false;
    for (let f = 0; f < fields.length; f++) {
      const v = doc[fields[f]!];
      if (Array.isArray(v)) return this.keysAtPaths(doc);
      if (v === undefined) key[f] = null;
      else {
        key[f] = v;
        present = true;
      }
    }
    return this.sparse && !present ? [] : [key];
  }

  /** Keys at each field's path: one per combination of the values found there and the elements of an array. */
  private keysAtPaths(doc: Document): unknown[][] {
    const perField: unknown[][] = [];
    let arrayFields: string[] = [];
    let present = false;
    for (let f = 0; f < this.fields.length; f++) {
      const [path] = this.fields[f]!;
      const found = valuesAtParts(doc, this.fieldParts[f]!); // one parts list per field
      if (found.length) present = true;
      const values: unknown[] = [];
      let sawArray = found.length > 1;
      for (const v of found) {
        if (Array.isArray(v)) {
          sawArray = true;
          // An empty array is indexed as undefined, which sorts and matches like null.
          if (v.length === 0) values.push(null);
          else for (const el of v) values.push(el === undefined ? null : el);
        } else values.push(v === undefined ? null : v);
      }
      if (sawArray) arrayFields.push(path);
      perField.push(values.length ? dedupe(values, this.collation) : [null]);
    }
    if (this.sparse && !present) return [];
    if (arrayFields.length > 1) {
      arrayFields = arrayFields.reverse();
      throw commandError(ErrorCodes.CannotIndexParallelArrays, `cannot index parallel arrays [${arrayFields[0]}] [${arrayFields[1]}]`);
    }
    if (perField.every((v) => v.length === 1)) return [perField.map((v) => v[0])];
    let keys: unknown[][] = [[]];
    for (const values of perField) keys = keys.flatMap((k) => values.map((v) => [...k, v]));
    return keys;
  }

  noteMultikey(keys: unknown[][]): void {
    if (keys.length > 1) this.multikey = true;
  }

  /** A key of `keys` already held by another record, if any. */
  findConflict(keys: unknown[][], rid: number): unknown[] | undefined {
    if (!this.unique) return undefined;
    for (const key of keys) {
      const owner = this.hashLookup(key);
      if (owner !== undefined) {
        if (owner !== null && owner !== rid) return key;
        continue;
      }
      const pos = this.seekKey(key);
      let conflict = false;
      this.entries.forwardFrom(pos, (e) => {
        if (this.compareKeys(e, key) !== 0) return false;
        if (entryRid(e) !== rid) conflict = true;
        return !conflict;
      });
      if (conflict) return key;
    }
    return undefined;
  }

  /**
   * A copy holding the same entries (a transaction's private collection): the ordered set's chunks are shared
   * until either side writes one. The hash is not copied (that would cost a probe per entry): the copy's stays empty and untrusted
   * (one more than the unhashable entries, for good), so the copy answers lookups from its ordered set.
   */
  clone(): CollectionIndex {
    const copy = new CollectionIndex(this.spec);
    copy.entries.copyFrom(this.entries);
    copy.multikey = this.multikey;
    copy.unhashable = this.unhashable + 1;
    return copy;
  }

  add(keys: unknown[][], rid: number): void {
    for (const key of keys) {
      this.entries.insert(indexEntry(key, rid));
      if (this.hash) {
        const h = this.hashOf(key);
        if (h === undefined) this.unhashable++;
        else this.hashMapOf(key).set(h, rid);
      }
    }
    this.noteMultikey(keys);
  }

  /**
   * Moves record `rid` from `oldKeys` to `newKeys`, touching only the keys that differ: a write adding one element
   * to a long indexed array changes one entry, not all of them. Keys without a canonical string are all moved.
   */
  replaceKeys(oldKeys: unknown[][], newKeys: unknown[][], rid: number): void {
    // One key or none on a side (a document entering or leaving a partial index, a changed scalar): nothing to
    // spare by matching keys, which would only build their strings.
    if (oldKeys.length <= 1 || newKeys.length <= 1) {
      this.moveAll(oldKeys, newKeys, rid);
      return;
    }
    const oldByHash = new Map<string, unknown[]>();
    for (const key of oldKeys) {
      const h = hashKey(key);
      if (h === undefined) {
        this.moveAll(oldKeys, newKeys, rid);
        return;
      }
      oldByHash.set(h, key);
    }
    const added: unknown[][] = [];
    for (const key of newKeys) {
      const h = hashKey(key);
      if (h === undefined) {
        this.moveAll(oldKeys, newKeys, rid);
        return;
      }
      if (!oldByHash.delete(h)) added.push(key);
    }
    this.remove([...oldByHash.values()], rid);
    this.add(added, rid);
    this.noteMultikey(newKeys);
  }

  private moveAll(oldKeys: unknown[][], newKeys: unknown[][], rid: number): void {
    this.remove(oldKeys, rid);
    this.add(newKeys, rid);
  }

  remove(keys: unknown[][], rid: number): void {
    for (const key of keys) {
      if (!this.entries.delete(indexEntry(key, rid)) || !this.hash) continue;
      const h = this.hashOf(key);
      const map = this.hashMapOf(key);
      if (h === undefined) this.unhashable--;
      else if (map.get(h) === rid) map.delete(h);
    }
  }

  /**
   * For a unique index: the record holding exactly `key` (null: none), or undefined when the hash cannot answer
   * (not unique, a value without canonical string, or unhashable entries present).
   */
  hashLookup(key: unknown[]): number | null | undefined {
    if (!this.hash || this.unhashable > 0 || key.length !== this.fields.length) return undefined;
    const h = this.hashOf(key);
    if (h === undefined) return undefined;
    return this.hashMapOf(key).get(h) ?? null;
  }

  /** The map of the hash that holds `key`: stringHash for one field holding a string, else hash (see hashOf). */
  private hashMapOf(key: unknown[]): Map<string, number> {
    // Both are set together, for a unique index.
    return (key.length === 1 && typeof key[0] === "string" ? this.stringHash : this.hash)!;
  }

  /**
   * `key`'s key in its map (hashMapOf): a one-field string's the string itself; otherwise `hashKey(key)`, the last
   * key's string again when `key` is that same array (keys are never changed).
   */
  private hashOf(key: unknown[]): string | undefined {
    if (key.length === 1 && typeof key[0] === "string") return key[0];
    if (key !== this.hashedKey) {
      this.hashedKey = key;
      this.hashedAs = hashKey(key);
    }
    return this.hashedAs;
  }

  /** Record ids whose key equals `key` exactly (all fields). */
  lookup(key: unknown[]): number[] {
    const owner = this.hashLookup(key);
    if (owner !== undefined) return owner === null ? [] : [owner];
    const rids: number[] = [];
    this.entries.forwardFrom(this.seekKey(key), (e) => {
      if (this.compareKeys(e, key) !== 0) return false;
      rids.push(entryRid(e));
      return true;
    });
    return rids;
  }

  seekKey(key: unknown[]): Position {
    return this.entries.seek((e) => this.compareKeys(e, key) < 0);
  }

  /** An entry's key: its fields without the record id. */
  keyOf(entry: IndexEntry): unknown[] {
    return entry.slice(0, this.fields.length);
  }

  /**
   * Compares the first key.length fields in index order (direction applied); `entryKey` may be an entry, whose
   * record id follows its key's fields.
   */
  compareKeys(entryKey: unknown[], key: unknown[]): number {
    const strings = this.collation?.compare;
    for (let i = 0; i < key.length; i++) {
      const c = compareValues(entryKey[i], key[i], strings);
      if (c) return c * this.fields[i]![1]; // a key never has more fields than the index
    }
    return 0;
  }

  duplicateKeyError(ns: string, key: unknown[]): Error {
    const keyValue: Document = {};
    this.fields.forEach(([path], i) => (keyValue[path] = key[i]));
    const shown = this.fields.map(([path], i) => `${path}: ${formatValue(key[i])}`).join(", ");
    return commandError(ErrorCodes.DuplicateKey, `E11000 duplicate key error collection: ${ns} index: ${this.name} dup key: { ${shown} }`, {
      keyPattern: this.keyPattern,
      keyValue,
    });
  }
}

/**
 * Canonical string of an index key: equal under BSON comparison <=> equal strings, for the value types that
 * dominate lookups (numbers of any width, strings, ObjectId, dates, booleans, null). Undefined for the rest.
 */
function hashKey(key: unknown[]): string | undefined {
  let out = "";
  for (const v of key) {
    const part = hashValue(v);
    if (part === undefined) return undefined;
    out += key.length === 1 ? part : `${part.length}:${part}`;
  }
  return out;
}

function hashValue(v: unknown): string | undefined {
  switch (typeof v) {
    case "string":
      return `s${v}`;
    case "number":
      if (Number.isNaN(v)) return "nNaN";
      if (Number.isSafeInteger(v) || !Number.isInteger(v)) return `n${Object.is(v, -0) ? 0 : v}`;
      return `n${BigInt(v).toString()}`;
    case "boolean":
      return v ? "b1" : "b0";
    case "object": {
      if (v === null) return "z";
      if (v instanceof Date) return `d${v.getTime()}`;
      const t = (v as { _bsontype?: string })._bsontype;
      if (t === "ObjectId") return `o${(v as { toHexString(): string }).toHexString()}`;
      if (t === "Double") return hashValue((v as { value: number }).value);
      if (t === "Long") {
        const big = (v as { toBigInt(): bigint }).toBigInt();
        const n = Number(big);
        return `n${Number.isSafeInteger(n) ? String(n) : big.toString()}`;
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

/** Leading characters a string's rank holds, and the digits of each: 0 its end, 1 to 127 a code unit below 127, 128 one from 127 up. */
const RANKED_CHARACTERS = 7;
const RANK_BASE = 129;

/**
 * An entry's rank in the ordered set (ordered-set.ts): for a string in the first field (binary order), its first
 * seven UTF-16 code units as the digits of a number, so that a smaller rank is a smaller string; the digits stop at
 * the first code unit from 127 up (counted as the largest digit), which only ASCII keeps apart. NaN for any other
 * value (the comparison decides). 129^7 is below 2^53: every rank is an exact integer.
 */
function firstFieldRank(first: unknown, direction: 1 | -1): number {
  if (typeof first !== "string") return Number.NaN;
  let rank = 0;
  let open = true;
  for (let i = 0; i < RANKED_CHARACTERS; i++) {
    let digit = 0;
    if (open && i < first.length) {
      const unit = first.charCodeAt(i);
      if (unit < 127) digit = unit + 1;
      else {
        digit = 128;
        open = false;
      }
    } else open = false;
    rank = rank * RANK_BASE + digit;
  }
  return rank * direction;
}

/** `values` without repeats (equal as index keys compare). Linear by canonical string when every value has one. */
function dedupe(values: unknown[], collation?: Collation): unknown[] {
  if (values.length < 2) return values;
  if (!collation) {
    const seen = new Set<string>();
    const unique: unknown[] = [];
    for (const v of values) {
      const h = hashValue(v);
      if (h === undefined) return dedupePairwise(values, collation);
      if (!seen.has(h)) {
        seen.add(h);
        unique.push(v);
      }
    }
    return unique;
  }
  return dedupePairwise(values, collation);
}

/** Quadratic, for values without a canonical string (and collated strings, equal without being the same). */
function dedupePairwise(values: unknown[], collation?: Collation): unknown[] {
  const out: unknown[] = [];
  for (const v of values) if (!out.some((o) => compareValues(o, v, collation?.compare) === 0)) out.push(v);
  return out;
}

export function sameKeys(a: unknown[][], b: unknown[][]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    for (let j = 0; j < x.length; j++) if (compareValues(x[j], y[j]) !== 0 || typeof x[j] !== typeof y[j]) return false;
  }
  return true;
}

/** Default index name, as mongod derives it from the key pattern: `a_1_b_-1`. */
export function defaultIndexName(key: Document): string {
  return Object.entries(key)
    .map(([k, v]) => `${k}_${v}`)
    .join("_");
}

/** The first components of `paths` and of the field paths in `filter`; null for a wildcard or an operator it cannot read. */
function topLevelFields(paths: string[], filter: Document | undefined): Set<string> | null {
  const fields = new Set<string>();
  for (const path of paths) {
    if (path.includes("$**") || path.startsWith("$")) return null;
    fields.add(path.split(".")[0]!);
  }
  const visit = (clause: Document): boolean => {
    for (const [key, value] of Object.entries(clause)) {
      if (!key.startsWith("$")) {
        fields.add(key.split(".")[0]!);
        continue;
      }
      // $and/$or/$nor hold clauses of fields; anything else ($expr, $where...) may read any field.
      if (!["$and", "$or", "$nor"].includes(key) || !Array.isArray(value)) return false;
      for (const sub of value) if (sub === null || typeof sub !== "object" || !visit(sub as Document)) return false;
    }
    return true;
  };
  return filter === undefined || visit(filter) ? fields : null;
}

/** Whether `after` holds the very same value as `before` in each of `fields`. */
export function sameFields(fields: ReadonlySet<string>, before: Document, after: Document): boolean {
  for (const field of fields) if (before[field] !== after[field]) return false;
  return true;
}
