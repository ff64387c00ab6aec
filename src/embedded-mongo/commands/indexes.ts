// Index commands: createIndexes, listIndexes, dropIndexes, with mongod's conflict codes (85/86) and messages.
import { Long, type Document } from "bson";
import { compareValues } from "../query/bson-order.ts";
import { CollectionIndex, defaultIndexName } from "../storage/collection-index.ts";
import type { Collection } from "../storage/collection.ts";
import type { CommandHandler } from "./context.ts";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import { formatValue } from "../bson/format.ts";
import { collectionName, ns } from "./common.ts";
import { checkReadConcern } from "./command-options.ts";
import { type Collation, parseCollation } from "../query/collation.ts";
import { refuseView } from "../storage/views.ts";

const CannotCreateIndex = 67;
const OPTION_FIELDS = ["unique", "sparse", "partialFilterExpression", "expireAfterSeconds", "hidden"] as const;
// Index options mongod ignores (kept for compatibility) and those this server implements; any other option
// (text, geo, wildcard...) answers mongod's InvalidIndexSpecificationOption rather than building a plain index.
const IGNORED_FIELDS = new Set(["v", "background", "ns", "comment"]);
const KNOWN_FIELDS = new Set(["key", "name", "collation", ...OPTION_FIELDS]);

/** The spec as listIndexes shows it; without a collation of its own an index takes the collection's default. */
function normalizeSpec(raw: Document, defaultCollation: Collation | undefined): Document {
  const key = raw.key;
  if (!key || typeof key !== "object" || Array.isArray(key) || Object.keys(key).length === 0) {
    throw commandError(ErrorCodes.FailedToParse, "The 'key' field is a required property of an index specification");
  }
  for (const [field, dir] of Object.entries(key as Document)) {
    const n = typeof dir === "number" ? dir : Number(dir);
    if (typeof dir === "string" || !Number.isFinite(n) || n === 0) {
      throw commandError(
        CannotCreateIndex,
        `Error in specification { key: ${formatValue(key)} } :: caused by :: Values in the index key pattern can only be non-zero numbers (special index types such as ${JSON.stringify(dir)} on '${field}' are not supported by the embedded server)`,
      );
    }
  }
  const collation = parseCollation(raw.collation);
  for (const field of Object.keys(raw)) {
    if (!KNOWN_FIELDS.has(field) && !IGNORED_FIELDS.has(field)) {
      throw commandError(
        ErrorCodes.InvalidIndexSpecificationOption,
        `The field '${field}' is not valid for an index specification. Specification: ${formatValue(raw)}`,
      );
    }
  }
  const name = raw.name === undefined ? defaultIndexName(key as Document) : raw.name;
  if (typeof name !== "string" || name.length === 0) throw commandError(ErrorCodes.BadValue, "The index name cannot be empty");
  const spec: Document = { v: 2, key, name };
  if (raw.unique === true) spec.unique = true;
  if (raw.sparse === true) spec.sparse = true;
  if (raw.hidden === true) {
    if (key && (key as Document)._id !== undefined && Object.keys(key as Document).length === 1)
      throw commandError(ErrorCodes.BadValue, "can't hide _id index");
    spec.hidden = true;
  }
  if (raw.partialFilterExpression !== undefined) {
    if (typeof raw.partialFilterExpression !== "object" || raw.partialFilterExpression === null) {
      throw commandError(ErrorCodes.TypeMismatch, "The field 'partialFilterExpression' must be an object");
    }
    if (spec.sparse) throw commandError(CannotCreateIndex, 'cannot mix "partialFilterExpression" and "sparse" options');
    spec.partialFilterExpression = raw.partialFilterExpression;
  }
  if (raw.expireAfterSeconds !== undefined) {
    const secs = Number(raw.expireAfterSeconds);
    if (!Number.isFinite(secs) || secs < 0)
      throw commandError(CannotCreateIndex, "TTL index 'expireAfterSeconds' option must be a non-negative number");
    if (Object.keys(key as Document).length > 1) {
      throw commandError(CannotCreateIndex, "TTL index 'expireAfterSeconds' option is not supported on compound indexes");
    }
    spec.expireAfterSeconds = Math.floor(secs);
  }
  if (name === "_id_" && compareValues(key, { _id: 1 }) !== 0) {
    throw commandError(ErrorCodes.BadValue, "The index name '_id_' is reserved for the _id index");
  }
  const indexCollation = collation === undefined ? defaultCollation : (collation ?? undefined);
  if (indexCollation) spec.collation = indexCollation.spec;
  return spec;
}

function sameOptions(a: Document, b: Document): boolean {
  return OPTION_FIELDS.every((f) => compareValues(a[f], b[f]) === 0) && compareValues(a.collation, b.collation) === 0;
}

function sameKey(a: Document, b: Document): boolean {
  return compareValues(a.key, b.key) === 0 && JSON.stringify(Object.keys(a.key)) === JSON.stringify(Object.keys(b.key));
}

/** Throws mongod's conflict error, or returns true when an identical index already exists. */
function checkConflicts(coll: Collection, spec: Document): boolean {
  const byName = coll.index(spec.name)?.spec;
  if (byName) {
    if (sameKey(byName, spec) && sameOptions(byName, spec)) return true;
    if (!sameKey(byName, spec)) {
      throw commandError(
        ErrorCodes.IndexKeySpecsConflict,
        `An existing index has the same name as the requested index. When index names are not specified, they are auto generated and can cause conflicts. Please refer to our documentation. Requested index: ${formatValue(spec)}, existing index: ${formatValue(byName)}`,
      );
    }
    throw commandError(
      ErrorCodes.IndexKeySpecsConflict,
      `An equivalent index already exists with the same name but different options. Requested index: ${formatValue(spec)}, existing index: ${formatValue(byName)}`,
    );
  }
  for (const index of coll.indexes) {
    const existing = index.spec;
    if (!sameKey(existing, spec)) continue;
    // Indexes on one key pattern may coexist when their partial filters or their collations differ.
    if (compareValues(existing.partialFilterExpression, spec.partialFilterExpression) !== 0) continue;
    if (compareValues(existing.collation, spec.collation) !== 0) continue;
    if (sameOptions(existing, spec)) {
      throw commandError(ErrorCodes.IndexOptionsConflict, `Index already exists with a different name: ${existing.name}`);
    }
    throw commandError(
      ErrorCodes.IndexOptionsConflict,
      `An equivalent index already exists with a different name and options. Requested index: ${formatValue(spec)}, existing index: ${formatValue(existing)}`,
    );
  }
  return false;
}

export const indexCommands: Record<string, CommandHandler> = {
  createIndexes: (cmd, ctx) => {
    const name = collectionName(cmd, "createIndexes");
    if (!Array.isArray(cmd.indexes) || cmd.indexes.length === 0) {
      throw commandError(ErrorCodes.BadValue, "Must specify at least one index to create");
    }
    const defaultCollation = ctx.server.store.get(ctx.db, name)?.collation;
    const specs = (cmd.indexes as Document[]).map((raw) => normalizeSpec(raw, defaultCollation));
    const store = ctx.server.store;
    refuseView(store.get(ctx.db, name), ns(ctx, name));
    const existed = store.get(ctx.db, name) !== undefined;
    const coll = store.ensure(ctx.db, name);
    if (coll.timeseries && specs.some((s) => s.unique))
      throw commandError(ErrorCodes.InvalidOptions, "Unique indexes are not supported on time-series collections");
    const before = coll.timeseries ? coll.indexes.length - 1 : coll.indexes.length;
    const created: string[] = [];
    try {
      for (const spec of specs) {
        if (checkConflicts(coll, spec)) continue;
        coll.addIndex(new CollectionIndex(spec));
        created.push(spec.name);
      }
    } catch (err) {
      // createIndexes is all-or-nothing, like mongod's.
      for (const indexName of created) coll.dropIndex(indexName);
      if (!existed) store.drop(ctx.db, name);
      throw err;
    }
    const reply: Document = {
      numIndexesBefore: before,
      numIndexesAfter: coll.indexes.length - (coll.timeseries ? 1 : 0),
      createdCollectionAutomatically: !existed,
    };
    if (created.length === 0) reply.note = "all indexes already exist";
    reply.ok = 1;
    return reply;
  },

  listIndexes: (cmd, ctx) => {
    const name = collectionName(cmd, "listIndexes");
    checkReadConcern(cmd, ctx);
    const coll = ctx.server.store.get(ctx.db, name);
    if (!coll) throw commandError(ErrorCodes.NamespaceNotFound, `ns does not exist: ${ns(ctx, name)}`);
    refuseView(coll, ns(ctx, name));
    // A time-series collection's internal _id index is not one of its indexes (mongod's has none).
    const specs = (coll.timeseries ? coll.indexes.slice(1) : coll.indexes).map((i) => i.spec);
    return { cursor: { firstBatch: specs, id: Long.ZERO, ns: ns(ctx, name) }, ok: 1 };
  },

  dropIndexes: (cmd, ctx) => {
    const name = collectionName(cmd, "dropIndexes");
    const coll = ctx.server.store.get(ctx.db, name);
    if (!coll) throw commandError(ErrorCodes.NamespaceNotFound, `ns not found ${ns(ctx, name)}`);
    const nIndexesWas = coll.indexes.length;
    const target = cmd.index;
    let names: string[];
    if (target === "*") names = coll.indexes.slice(1).map((i) => i.name);
    else if (typeof target === "string") names = [target];
    else if (Array.isArray(target)) names = target.map(String);
    else if (target && typeof target === "object") {
      const matches = coll.indexes.filter((i) => sameKey(i.spec, { key: target }));
      const [match] = matches;
      if (match === undefined) {
        throw commandError(ErrorCodes.IndexNotFound, `can't find index with key: ${formatValue(target)}`);
      }
      if (matches.length > 1)
        throw commandError(
          ErrorCodes.IndexNotFound,
          `${matches.length} indexes found for key: ${formatValue(target)}, identify by name instead. Conflicting indexes: ${matches.map((m) => formatValue(m.spec)).join(", ")}`,
        );
      names = [match.name];
    } else throw commandError(ErrorCodes.TypeMismatch, "BSON field 'dropIndexes.index' is missing or has the wrong type");
    for (const indexName of names) {
      if (indexName === "_id_") throw commandError(ErrorCodes.InvalidOptions, "cannot drop _id index");
      if (coll.idIndex.spec.clustered === true && indexName === coll.idIndex.name)
        throw commandError(ErrorCodes.InvalidOptions, "cannot drop a clustered index");
      if (!coll.index(indexName)) throw commandError(ErrorCodes.IndexNotFound, `index not found with name [${indexName}]`);
    }
    for (const indexName of names) coll.dropIndex(indexName);
    return { nIndexesWas, ok: 1 };
  },
};
