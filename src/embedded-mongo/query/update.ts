// Update application: operator updates through mingo's updater ($setOnInsert handled here, since mingo lacks it),
// replacements, pipeline updates, and upsert seeding from the query's equality predicates.
import { ObjectId, type Document } from "bson";
import { updateOne } from "mingo";
import { compareValues, containsString, valueAtPath } from "./bson-order.ts";
import type { Collation } from "./collation.ts";
import { commandError, CommandError, ErrorCodes } from "../bson/errors.ts";
import { cloneDocument } from "../bson/clone.ts";
import { plainNumbers, restoreNumbers } from "../bson/numbers.ts";
import { applyFastUpdate, leftToMingo, numberUpdate, sameStoredValue } from "./update-fast-path.ts";
import { runPipelineUpdate } from "./update-pipeline.ts";
import { applyPull } from "./update-pull.ts";
import { hasPositional, resolvePositionalPaths } from "./update-positional.ts";

const UPDATE_OPERATORS = new Set([
  "$set",
  "$unset",
  "$inc",
  "$mul",
  "$min",
  "$max",
  "$rename",
  "$currentDate",
  "$push",
  "$pull",
  "$pullAll",
  "$addToSet",
  "$pop",
  "$bit",
  "$setOnInsert",
]);

export type UpdateSpec = Document | Document[];

export function isOperatorUpdate(update: UpdateSpec): boolean {
  if (Array.isArray(update)) return false;
  const [first] = Object.keys(update);
  return first?.startsWith("$") === true;
}

export function validateUpdate(update: UpdateSpec): void {
  if (Array.isArray(update)) return;
  if (update === null || typeof update !== "object")
    throw commandError(ErrorCodes.FailedToParse, "Update argument must be either an object or an array");
  const keys = Object.keys(update);
  if (!isOperatorUpdate(update)) {
    const dollar = keys.find((k) => k.startsWith("$"));
    if (dollar) {
      throw commandError(
        ErrorCodes.DollarPrefixedFieldName,
        `The dollar ($) prefixed field '${dollar}' in '${dollar}' is not allowed in the context of an update's replacement document. Consider using an aggregation pipeline with $replaceWith.`,
      );
    }
    return;
  }
  const paths: string[] = [];
  for (const op of keys) {
    if (!UPDATE_OPERATORS.has(op)) {
      throw commandError(
        ErrorCodes.FailedToParse,
        `Unknown modifier: ${op}. Expected a valid update modifier or pipeline-style update specified as an array`,
      );
    }
    const arg = update[op];
    if (arg === null || typeof arg !== "object" || Array.isArray(arg)) {
      throw commandError(
        ErrorCodes.FailedToParse,
        `Modifiers operate on fields but we found type ${arg === null ? "null" : Array.isArray(arg) ? "array" : typeof arg} instead. For example: {$mod: {<field>: ...}} not {$set: ${String(arg)}}`,
      );
    }
    paths.push(...Object.keys(arg as Document));
    if (op === "$rename") paths.push(...Object.values(arg as Document).map(String));
  }
  // Two operators may not touch the same path or a path and its parent (mongod's ConflictingUpdateOperators).
  if (paths.length < 2) return;
  const sorted = paths.sort();
  for (let i = 1; i < sorted.length; i++) {
    const [a, b] = [sorted[i - 1]!, sorted[i]!];
    if (a === b || b.startsWith(`${a}.`)) {
      throw commandError(ErrorCodes.ConflictingUpdateOperators, `Updating the path '${b}' would create a conflict at '${a}'`);
    }
  }
}

// Each option may be given as undefined (the command did not set it): the same as leaving it out.
export interface ApplyOptions {
  arrayFilters?: Document[] | undefined;
  /** The query, needed for the positional `$` operator. */
  query?: Document | undefined;
  /** The command's `let` constants ($$name in pipeline updates). */
  variables?: Document | undefined;
  /** True while building an upserted document: $setOnInsert applies. */
  inserting?: boolean | undefined;
  /** The statement's collation (none: binary): positional `$`, arrayFilters, $pull and pipeline comparisons. */
  collation?: Collation | undefined;
}

/**
 * Operators whose string comparisons are binary here ($addToSet, $pullAll, $min, $max go through mingo, and
 * $push's $sort): under a collation they are refused when strings could meet, rather than compared binary.
 */
function refuseUncollated(update: Document): void {
  for (const op of ["$addToSet", "$pullAll", "$min", "$max"]) {
    if (update[op] !== undefined && containsString(update[op])) {
      throw commandError(ErrorCodes.BadValue, `${op} on strings with a non-simple collation is not supported by the embedded server`);
    }
  }
  const push = update.$push as Document | undefined;
  if (push && Object.values(push).some((arg) => arg !== null && typeof arg === "object" && "$sort" in (arg as Document))) {
    throw commandError(ErrorCodes.BadValue, "$push with $sort and a non-simple collation is not supported by the embedded server");
  }
}

/** Returns the updated copy of `doc` (never mutates it) and whether anything changed. */
export function applyUpdate(doc: Document, update: UpdateSpec, options: ApplyOptions = {}): { doc: Document; modified: boolean } {
  if (!Array.isArray(update) && !isOperatorUpdate(update)) {
    const replacement: Document = { _id: doc._id, ...cloneDocument(update) };
    if (replacement._id === undefined) delete replacement._id;
    checkIdUnchanged(doc, replacement);
    return { doc: replacement, modified: !sameDocument(doc, replacement) };
  }
  if (Array.isArray(update)) {
    const result = runPipelineUpdate(doc, update, options.variables, options.collation);
    return { doc: result, modified: !sameDocument(doc, result) };
  }
  if (options.collation) refuseUncollated(update);
  if (!hasPositional(update) && !options.arrayFilters?.length) {
    const fast = applyFastUpdate(doc, update, options.inserting === true, options.collation);
    if (fast) {
      checkIdUnchanged(doc, fast.doc);
      return fast;
    }
  }
  const copy = cloneDocument(doc);
  let modifier: Document = update;
  if ("$setOnInsert" in update) {
    const { $setOnInsert, ...rest } = update;
    modifier = options.inserting ? { ...rest, $set: { ...(rest.$set as Document), ...($setOnInsert as Document) } } : rest;
  }
  if (Object.keys(modifier).length === 0) return { doc, modified: false };
  // Positional paths are resolved once against the original document (mingo would see them as conflicting).
  if (hasPositional(modifier) || options.arrayFilters?.length) {
    modifier = resolvePositionalPaths(doc, modifier, options.query, options.arrayFilters, options.collation);
    const fast = applyFastUpdate(doc, modifier, options.inserting === true, options.collation);
    if (fast) {
      checkIdUnchanged(doc, fast.doc);
      return fast;
    }
  }
  const { $pull, ...withoutPull } = modifier;
  // mingo computes and compares JS numbers only: it works on plain numbers (the values $set and $push write keep
  // their types), and the fields it left unchanged get their stored types back below.
  const docs: [Document] = [plainNumbers(copy)];
  const operators = Object.fromEntries(
    Object.entries(withoutPull).map(([op, args]) => [op, op === "$set" || op === "$push" ? args : plainNumbers(args)]),
  );
  let modified = false;
  try {
    if (Object.keys(operators).length) modified = updateOne(docs, {}, operators, { cloneMode: "copy" }).modifiedCount > 0;
    if ($pull !== undefined) modified = applyPull(docs[0], plainNumbers($pull) as Document, options.collation) || modified;
  } catch (err) {
    if (err instanceof CommandError) throw err;
    const message = (err as Error).message;
    if (message.includes("would modify the immutable field")) throw commandError(ErrorCodes.ImmutableField, message.replace(/\.$/, ""));
    throw commandError(ErrorCodes.BadValue, message);
  }
  const result = restoreNumbers(doc, docs[0]) as Document;
  retypeNumbers(doc, result, withoutPull);
  checkIdUnchanged(doc, result);
  return { doc: result, modified: modified && !sameDocument(doc, result) };
}

/**
 * Puts the values `$inc`, `$mul`, `$min` and `$max` wrote through mingo (plain numbers) back as mongod types them,
 * into `result` (containers of its own): paths through array elements (`a.1`) come here.
 */
function retypeNumbers(doc: Document, result: Document, modifier: Document): void {
  for (const op of ["$inc", "$mul", "$min", "$max"]) {
    const fields = modifier[op] as Document | undefined;
    if (!fields) continue;
    for (const [dotted, arg] of Object.entries(fields)) {
      const split = dotted.lastIndexOf(".");
      const field = dotted.slice(split + 1);
      // The containers of the field, before and after.
      const before = split < 0 ? doc : valueAtPath(doc, dotted.slice(0, split));
      const after = split < 0 ? result : valueAtPath(result, dotted.slice(0, split));
      if (after === null || typeof after !== "object" || typeof (after as Document)[field] !== "number") continue;
      const has = before !== null && typeof before === "object" && Object.hasOwn(before, field);
      const next = numberUpdate(op, has, has ? (before as Document)[field] : undefined, arg, doc, dotted, field);
      if (!leftToMingo(next)) (after as Document)[field] = next;
    }
  }
}

function checkIdUnchanged(before: Document, after: Document): void {
  if (before._id === undefined) return;
  if (after._id === undefined || compareValues(before._id, after._id) !== 0) {
    throw commandError(ErrorCodes.ImmutableField, "Performing an update on the path '_id' would modify the immutable field '_id'");
  }
}

/** Same fields in the same order with equal values (how mongod decides nModified: the stored bytes changed). */
function sameDocument(a: Document, b: Document): boolean {
  return sameStoredValue(a, b) && JSON.stringify(Object.keys(a)) === JSON.stringify(Object.keys(b));
}

/** The document an upsert starts from: the query's equality fields (top level and inside $and), dotted paths expanded. */
export function upsertSeed(query: Document): Document {
  const seed: Document = {};
  const visit = (q: Document) => {
    for (const [k, v] of Object.entries(q)) {
      if (k === "$and" && Array.isArray(v)) v.forEach((sub) => visit(sub as Document));
      if (k.startsWith("$")) continue;
      let value: unknown = v;
      if (
        v &&
        typeof v === "object" &&
        !Array.isArray(v) &&
        !(v instanceof Date) &&
        !(v instanceof RegExp) &&
        !(v as { _bsontype?: string })._bsontype
      ) {
        const keys = Object.keys(v);
        const [first] = keys;
        if (first?.startsWith("$")) {
          // {$eq: x} and a one-element {$in: [x]} are equalities (mongod seeds from both).
          const only = keys.length === 1 ? (v as Document)[first] : undefined;
          if (first === "$eq" && keys.length === 1) value = only;
          else if (first === "$in" && Array.isArray(only) && only.length === 1) value = only[0];
          else continue;
        }
      }
      if (value instanceof RegExp) continue;
      setPath(seed, k, cloneDocument(value));
    }
  };
  visit(query);
  return seed;
}

function setPath(doc: Document, path: string, value: unknown): void {
  const parts = path.split(".");
  const last = parts.pop()!; // split gives at least one part
  let cur: Document = doc;
  for (const part of parts) {
    const next = cur[part];
    if (next === null || typeof next !== "object") cur[part] = {};
    cur = cur[part] as Document;
  }
  cur[last] = value;
}

/** Builds the document an upsert inserts; _id comes first, generated when neither query nor update sets it. */
export function buildUpsertDocument(query: Document, update: UpdateSpec, arrayFilters?: Document[], variables?: Document): Document {
  let doc: Document;
  if (!Array.isArray(update) && !isOperatorUpdate(update)) {
    const seed = upsertSeed(query);
    doc = { ...cloneDocument(update) };
    if (doc._id === undefined && seed._id !== undefined) doc._id = seed._id;
  } else {
    doc = applyUpdate(upsertSeed(query), update, { arrayFilters, inserting: true, query, variables }).doc;
  }
  return withIdFirst(doc);
}

export function withIdFirst(doc: Document): Document {
  if (doc._id === undefined) return { _id: new ObjectId(), ...doc };
  if (Object.keys(doc)[0] === "_id") return doc;
  const { _id, ...rest } = doc;
  return { _id, ...rest };
}
