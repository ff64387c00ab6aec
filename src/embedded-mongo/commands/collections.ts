// Namespace commands: create, drop, renameCollection, listCollections, dropDatabase.
import { Long, type Document } from "bson";
import type { CommandHandler } from "./context.ts";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import { validateCollectionName } from "../storage/store.ts";
import { collectionName, GENERIC_COMMAND_FIELDS, ns, optionalDocument } from "./common.ts";
import { createQuery } from "../query/matcher.ts";
import { checkReadConcern } from "./command-options.ts";
import { parseCollation } from "../query/collation.ts";
import { isView, validateViewOptions } from "../storage/views.ts";
import { normalizeCreateOptions } from "../storage/collection-options.ts";

/** "db.coll" of renameCollection's source or target. */
function splitNamespace(value: unknown, which: "source" | "target"): { db: string; coll: string } {
  if (typeof value !== "string")
    throw commandError(
      ErrorCodes.TypeMismatch,
      `BSON field 'renameCollection.${which === "source" ? "renameCollection" : "to"}' is the wrong type, expected type 'string'`,
    );
  const dot = value.indexOf(".");
  if (dot <= 0 || dot === value.length - 1) throw commandError(ErrorCodes.InvalidNamespace, `Invalid ${which} namespace: ${value}`);
  return { db: value.slice(0, dot), coll: value.slice(dot + 1) };
}

export const collectionCommands: Record<string, CommandHandler> = {
  create: (cmd, ctx) => {
    const name = collectionName(cmd, "create");
    validateCollectionName(ctx.db, name);
    if (ctx.server.store.get(ctx.db, name)) {
      throw commandError(ErrorCodes.NamespaceExists, `Collection ${ns(ctx, name)} already exists.`);
    }
    const options = Object.fromEntries(Object.entries(cmd).filter(([k]) => k !== "create" && !k.startsWith("$") && !GENERIC_COMMAND_FIELDS.has(k)));
    // The default collation is kept whole (every field filled in), as listCollections reports it; simple is none.
    const collation = parseCollation(options.collation);
    if (collation) options.collation = collation.spec;
    else delete options.collation;
    // Queryable encryption is refused rather than faked.
    if (options.encryptedFields !== undefined)
      throw commandError(ErrorCodes.InvalidOptions, "'encryptedFields' collections are not supported by the embedded server");
    if (options.viewOn !== undefined) {
      validateViewOptions(options);
      options.pipeline ??= [];
    } else if (options.pipeline !== undefined) {
      throw commandError(ErrorCodes.BadValue, "'pipeline' requires 'viewOn' to also be specified");
    } else normalizeCreateOptions(options);
    ctx.server.store.create(ctx.db, name, options);
    return { ok: 1 };
  },

  drop: (cmd, ctx) => {
    const name = collectionName(cmd, "drop");
    const dropped = ctx.server.store.drop(ctx.db, name);
    // Since 7.0 dropping a missing collection succeeds.
    if (!dropped) return { ok: 1 };
    return { nIndexesWas: dropped.indexes.length, ns: dropped.ns, ok: 1 };
  },

  renameCollection: (cmd, ctx) => {
    if (ctx.db !== "admin") throw commandError(ErrorCodes.Unauthorized, "renameCollection may only be run against the admin database.");
    const source = splitNamespace(cmd.renameCollection, "source");
    const target = splitNamespace(cmd.to, "target");
    for (const field of Object.keys(cmd)) {
      if (!["renameCollection", "to", "dropTarget", "stayTemp"].includes(field) && !field.startsWith("$") && !GENERIC_COMMAND_FIELDS.has(field))
        throw commandError(40415, `BSON field 'renameCollection.${field}' is an unknown field.`, { codeName: "Location40415" });
    }
    const dropTarget = cmd.dropTarget === true;
    const store = ctx.server.store;
    if (source.db === target.db && source.coll === target.coll)
      throw commandError(ErrorCodes.IllegalOperation, "Can't rename a collection to itself");
    const coll = store.get(source.db, source.coll);
    if (!coll) throw commandError(ErrorCodes.NamespaceNotFound, `Source collection ${source.db}.${source.coll} does not exist`);
    // A time-series collection is a view over its buckets in mongod: refused the same way.
    if (isView(coll) || coll.timeseries) throw commandError(ErrorCodes.CommandNotSupportedOnView, `cannot rename view: ${source.db}.${source.coll}`);
    validateCollectionName(target.db, target.coll);
    const existing = store.get(target.db, target.coll);
    if (existing && !dropTarget) throw commandError(ErrorCodes.NamespaceExists, "Target namespace exists");
    store.rename(source.db, source.coll, target.db, target.coll, dropTarget);
    return { ok: 1 };
  },

  dropDatabase: (_cmd, ctx) => {
    ctx.server.store.dropDatabase(ctx.db);
    return { dropped: ctx.db, ok: 1 };
  },

  listCollections: (cmd, ctx) => {
    checkReadConcern(cmd, ctx);
    const filter = optionalDocument(cmd, "filter");
    const query = filter && Object.keys(filter).length ? createQuery(filter) : undefined;
    const nameOnly = cmd.nameOnly === true;
    const collections = ctx.server.store.databases.get(ctx.db) ?? new Map();
    const infos: Document[] = [];
    for (const coll of collections.values()) {
      const type = isView(coll) ? "view" : coll.timeseries ? "timeseries" : "collection";
      let info: Document;
      if (type === "view") info = { name: coll.name, type, options: coll.options, info: { readOnly: true } };
      // mongod's time-series collection is a view over its buckets: no UUID, no _id index.
      else if (type === "timeseries") info = { name: coll.name, type, options: coll.options, info: { readOnly: false } };
      else {
        info = { name: coll.name, type, options: coll.options, info: { readOnly: false, uuid: coll.uuid } };
        // A clustered collection has no separate _id index.
        if (!coll.options.clusteredIndex)
          info.idIndex = coll.collation
            ? { v: 2, key: { _id: 1 }, name: "_id_", collation: coll.collation.spec }
            : { v: 2, key: { _id: 1 }, name: "_id_" };
      }
      if (query && !query.test(info)) continue;
      infos.push(nameOnly ? { name: coll.name, type } : info);
    }
    return { cursor: { firstBatch: infos, id: Long.ZERO, ns: `${ctx.db}.$cmd.listCollections` }, ok: 1 };
  },
};
