// The positional projection (`{"arr.$": 1}`: the first element of `arr` the query matched) and the checks mongod's
// projection parser makes on a find projection before running it: one positional path at most, at the end of its
// path, never beside `$elemMatch`, and no path given twice or inside another.
import type { Document } from "bson";
import { isPlainObject } from "./bson-order.ts";
import type { Collation } from "./collation.ts";
import { bsonTypeName } from "../bson/bson-type-names.ts";
import { commandError } from "../bson/errors.ts";
import { createQuery } from "./matcher.ts";

/** A positional path: the field it projects (`a.b` of `a.b.$`) and how to pick the element. */
export interface Positional {
  path: string;
  /**
   * The value the path gets: a one-element array of the element the query matched (an error as mongod's when
   * none did), the value itself when it is not an array, undefined when it is missing.
   */
  pick(doc: Document): unknown;
}

const MIDDLE_OF_PATH =
  "As of 4.4, it's illegal to specify positional operator in the middle of a path.Positional projection may only be used at the end, " +
  "for example: a.b.$. If the query previously used a form like a.b.$.d, remove the parts following the '$' and the results will be equivalent.";
const NOT_FOUND = "Executor error during find command :: caused by :: positional operator '.$' couldn't find a matching element in the array";
const MISMATCH = "Executor error during find command :: caused by :: positional operator '.$' element mismatch";

function isOperatorObject(v: unknown, op: string): v is Document {
  return isPlainObject(v) && Object.keys(v)[0] === op;
}

/**
 * Checks the projection in its order, as mongod's parser does, and returns its positional path if it has one.
 * `filter` and `collation` are the query's: the positional element is the first one they match.
 */
export function parsePositional(spec: Document, filter: Document, collation?: Collation): Positional | undefined {
  let positional: Positional | undefined;
  let elemMatch = false;
  const taken = new PathTree();
  for (const [path, value] of Object.entries(spec)) {
    const parts = path.split(".");
    const at = parts.indexOf("$");
    if (at === 0) throw commandError(16410, "FieldPath field names may not start with '$'. Consider using $getField or $setField.");
    if (at > 0 && at !== parts.length - 1) throw commandError(31394, MIDDLE_OF_PATH);
    if (at < 0) {
      if (isOperatorObject(value, "$elemMatch")) {
        if (!isPlainObject(value.$elemMatch))
          throw commandError(31274, `elemMatch: Invalid argument, object required, but got ${bsonTypeName(value.$elemMatch)}`);
        if (positional) throw commandError(31255, "Cannot specify positional operator and $elemMatch.");
        if (parts.length > 1) throw commandError(31275, "Cannot use $elemMatch projection on a nested field.");
        elemMatch = true;
      }
      if (!isPlainObject(value) || Object.keys(value)[0]?.startsWith("$")) taken.add(parts);
      continue;
    }
    if (isPlainObject(value)) throw commandError(31271, "positional projection cannot be used with an expression or sub object");
    if (typeof value !== "number" && typeof value !== "boolean" && !isNumberObject(value))
      throw commandError(31308, "positional projection cannot be used with a literal");
    if (!Number(value)) throw commandError(31395, "positional projection cannot be used with exclusion");
    if (positional) throw commandError(31276, "Cannot specify more than one positional projection per query.");
    if (elemMatch) throw commandError(31256, "Cannot specify positional operator and $elemMatch.");
    const prefix = parts.slice(0, -1);
    taken.add(prefix);
    positional = { path: prefix.join("."), pick: picker(prefix, filter, collation) };
  }
  return positional;
}

function isNumberObject(v: unknown): boolean {
  const type = (v as { _bsontype?: string } | null)?._bsontype;
  return type === "Int32" || type === "Double" || type === "Long" || type === "Decimal128";
}

/** The paths a projection names, so that one given twice, or inside another, is refused as mongod refuses it. */
class PathTree {
  private readonly root = new Map<string, PathNode>();

  add(parts: string[]): void {
    let level = this.root;
    for (let i = 0; i < parts.length; i++) {
      const name = parts[i]!;
      const existing = level.get(name);
      if (i === parts.length - 1) {
        if (existing) throw commandError(31250, `Path collision at ${parts.join(".")}`);
        level.set(name, "leaf");
        return;
      }
      if (existing === "leaf") throw commandError(31249, `Path collision at ${parts.join(".")} remaining portion ${parts.slice(1).join(".")}`);
      let next = existing;
      if (!next) {
        next = new Map();
        level.set(name, next);
      }
      level = next;
    }
  }
}
type PathNode = "leaf" | Map<string, PathNode>;

/**
 * mongod picks the array index at which the query's predicates on the projected field matched; here, the first
 * element that those predicates (the ones whose path starts with that field) match on their own.
 */
function picker(prefix: string[], filter: Document, collation?: Collation): (doc: Document) => unknown {
  const clauses = clausesOn(filter, prefix[0]!);
  const query = clauses.length ? createQuery({ $and: clauses }, undefined, collation) : undefined;
  return (doc) => {
    let value: unknown = doc;
    for (let i = 0; i < prefix.length; i++) {
      if (Array.isArray(value)) throw commandError(51247, MISMATCH);
      if (!isPlainObject(value) || !(prefix[i]! in value)) return undefined;
      value = value[prefix[i]!];
    }
    if (!Array.isArray(value)) return value;
    const element = query ? value.findIndex((el) => query.test(withValueAt(doc, prefix, [el]))) : -1;
    if (element < 0) throw commandError(51246, NOT_FOUND);
    return [value[element]];
  };
}

/** The clauses of a filter that look at `field` (top level, inside `$and`, and whole `$or`/`$nor` that name it). */
function clausesOn(filter: Document, field: string): Document[] {
  const out: Document[] = [];
  for (const [key, value] of Object.entries(filter)) {
    if (key === "$and" && Array.isArray(value)) for (const clause of value) out.push(...clausesOn(clause as Document, field));
    else if ((key === "$or" || key === "$nor") && names(value, field)) out.push({ [key]: value });
    else if (key.split(".")[0] === field) out.push({ [key]: value });
  }
  return out;
}

function names(value: unknown, field: string): boolean {
  if (Array.isArray(value)) return value.some((v) => names(v, field));
  if (!isPlainObject(value)) return false;
  return Object.entries(value).some(([key, v]) => key.split(".")[0] === field || (key.startsWith("$") && names(v, field)));
}

/** `doc` with `value` at the path (objects along it copied), or without the field when `value` is undefined. */
export function withValueAt(doc: Document, parts: string[], value: unknown): Document {
  const [head, ...rest] = parts;
  const out = { ...doc };
  if (rest.length === 0) {
    if (value === undefined) delete out[head!];
    else out[head!] = value;
  } else if (isPlainObject(out[head!])) out[head!] = withValueAt(out[head!], rest, value);
  return out;
}
