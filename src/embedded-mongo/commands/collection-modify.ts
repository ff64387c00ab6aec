// collMod: changes an index's expireAfterSeconds or hidden flag, a collection's changeStreamPreAndPostImages, or a
// view's definition, answering like mongod. Options this server would not enforce (validators, capped sizes...)
// are refused, never kept silently.
import type { Document } from "bson";
import { compareValues } from "../query/bson-order.ts";
import type { CommandHandler } from "./context.ts";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import { isView, validateViewOptions } from "../storage/views.ts";
import { collectionName, GENERIC_COMMAND_FIELDS, ns } from "./common.ts";
import { CollectionIndex, entryRid } from "../storage/collection-index.ts";
import { checkValidationOptions } from "../query/validation.ts";

const VALIDATION_FIELDS = ["validator", "validationLevel", "validationAction"];
import type { Collection } from "../storage/collection.ts";

const REFUSED = new Set(["expireAfterSeconds", "timeseries", "cappedSize", "cappedMax", "recordIdsReplicated"]);

/**
 * prepareUnique: the index starts refusing new duplicate keys (those it holds stay); unique: true then converts it
 * into a unique index, or answers 359 CannotConvertIndexToUnique with the _ids of each group of duplicates
 * (dryRun: only that check).
 */
function modifyUniqueness(coll: Collection, index: CollectionIndex, change: Document, reply: Document, dryRun: boolean): void {
  if (change.prepareUnique !== undefined && typeof change.prepareUnique !== "boolean")
    throw commandError(ErrorCodes.TypeMismatch, "BSON field 'collMod.index.prepareUnique' is the wrong type, expected type 'bool'");
  if (change.unique !== undefined && change.unique !== true) throw commandError(ErrorCodes.BadValue, "The field 'unique' can only be set to true");
  if (index === coll.idIndex) throw commandError(ErrorCodes.InvalidOptions, "The _id index is always unique");
  if (change.unique === true) {
    if (index.unique) return;
    if (index.spec.prepareUnique !== true && change.prepareUnique !== true)
      throw commandError(ErrorCodes.InvalidOptions, "Cannot make index unique with 'prepareUnique=false'. Run collMod to set it first.");
    const violations = duplicateGroups(coll, index);
    if (violations.length > 0)
      throw commandError(359, "Cannot convert the index to unique. Please resolve conflicting documents before running collMod again.", {
        codeName: "CannotConvertIndexToUnique",
        violations,
      });
    if (dryRun) return;
    const spec: Document = { ...index.spec, unique: true };
    delete spec.prepareUnique;
    const unique = new CollectionIndex(spec);
    for (const [rid, doc] of coll.docs) unique.add(unique.keysFor(doc), rid);
    coll.indexes[coll.indexes.indexOf(index)] = unique;
    reply.unique_new = true;
    return;
  }
  if (dryRun) return;
  const old = index.spec.prepareUnique === true;
  if (old !== change.prepareUnique) {
    reply.prepareUnique_old = old;
    reply.prepareUnique_new = change.prepareUnique;
  }
  if (change.prepareUnique) index.spec.prepareUnique = true;
  else delete index.spec.prepareUnique;
}

/** The _ids of the documents sharing each duplicated key of `index`. */
function duplicateGroups(coll: Collection, index: CollectionIndex): Document[] {
  const groups: Document[] = [];
  let current: { key: unknown[]; rids: Set<number> } | undefined;
  const close = () => {
    if (current && current.rids.size > 1) groups.push({ ids: [...current.rids].map((rid) => coll.docs.get(rid)?._id) });
  };
  index.entries.forwardFrom(
    index.entries.seek(() => false),
    (e) => {
      if (!current || index.compareKeys(e, current.key) !== 0) {
        close();
        current = { key: index.keyOf(e), rids: new Set() };
      }
      current.rids.add(entryRid(e));
      return true;
    },
  );
  close();
  return groups;
}

function modifyIndex(coll: Collection, spec: unknown, reply: Document, namespace: string, dryRun: boolean): void {
  if (spec === null || typeof spec !== "object" || Array.isArray(spec))
    throw commandError(ErrorCodes.TypeMismatch, "BSON field 'collMod.index' is the wrong type, expected type 'object'");
  const change = spec as Document;
  const index =
    typeof change.name === "string"
      ? coll.index(change.name)
      : change.keyPattern !== undefined
        ? coll.indexes.find((i) => compareValues(i.keyPattern, change.keyPattern) === 0)
        : undefined;
  if (change.name === undefined && change.keyPattern === undefined)
    throw commandError(ErrorCodes.InvalidOptions, "must specify either index name or key pattern for collMod");
  if (!index)
    throw commandError(ErrorCodes.IndexNotFound, `cannot find index ${String(change.name ?? JSON.stringify(change.keyPattern))} for ns ${namespace}`);
  if (change.expireAfterSeconds === undefined && change.hidden === undefined && change.prepareUnique === undefined && change.unique === undefined) {
    throw commandError(ErrorCodes.InvalidOptions, "no expireAfterSeconds, hidden, prepareUnique or unique field");
  }
  if (change.prepareUnique !== undefined || change.unique !== undefined) modifyUniqueness(coll, index, change, reply, dryRun);
  if (change.expireAfterSeconds !== undefined) {
    const secs = Number(change.expireAfterSeconds);
    if (!Number.isFinite(secs) || secs < 0)
      throw commandError(ErrorCodes.BadValue, "TTL index 'expireAfterSeconds' option must be a non-negative number");
    if (index.fields.length !== 1 || index.name === "_id_")
      throw commandError(ErrorCodes.InvalidOptions, "TTL indexes are single-field indexes, compound indexes do not support TTL");
    if (index.expireAfterSeconds !== undefined) reply.expireAfterSeconds_old = index.expireAfterSeconds;
    index.expireAfterSeconds = Math.floor(secs);
    index.spec.expireAfterSeconds = index.expireAfterSeconds;
    reply.expireAfterSeconds_new = index.expireAfterSeconds;
  }
  if (change.hidden !== undefined) {
    if (typeof change.hidden !== "boolean")
      throw commandError(ErrorCodes.TypeMismatch, "BSON field 'collMod.index.hidden' is the wrong type, expected type 'bool'");
    if (index.name === "_id_") throw commandError(ErrorCodes.BadValue, "can't hide _id index");
    if (index.hidden !== change.hidden) {
      reply.hidden_old = index.hidden;
      reply.hidden_new = change.hidden;
    }
    index.hidden = change.hidden;
    if (change.hidden) index.spec.hidden = true;
    else delete index.spec.hidden;
  }
}

export const collectionModifyCommands: Record<string, CommandHandler> = {
  collMod: (cmd, ctx) => {
    const name = collectionName(cmd, "collMod");
    const coll = ctx.server.store.get(ctx.db, name);
    if (!coll) throw commandError(ErrorCodes.NamespaceNotFound, `ns does not exist: ${ns(ctx, name)}`);
    const fields = Object.keys(cmd).filter((k) => k !== "collMod" && !GENERIC_COMMAND_FIELDS.has(k));
    for (const field of fields) {
      if (REFUSED.has(field))
        throw commandError(ErrorCodes.InvalidOptions, `collMod '${field}' is not supported by the embedded server (it would not be enforced)`);
      if (!["index", "changeStreamPreAndPostImages", "viewOn", "pipeline", "dryRun", ...VALIDATION_FIELDS].includes(field)) {
        throw commandError(40415, `BSON field 'collMod.${field}' is an unknown field.`);
      }
    }
    const reply: Document = {};
    if (cmd.viewOn !== undefined || cmd.pipeline !== undefined) {
      if (!isView(coll)) throw commandError(ErrorCodes.InvalidOptions, `ns ${ns(ctx, name)} is a collection, not a view`);
      if (cmd.viewOn === undefined || cmd.pipeline === undefined)
        throw commandError(ErrorCodes.InvalidOptions, "Must specify both 'viewOn' and 'pipeline' when modifying a view");
      validateViewOptions({ viewOn: cmd.viewOn, pipeline: cmd.pipeline });
      coll.options.viewOn = cmd.viewOn;
      coll.options.pipeline = cmd.pipeline;
    }
    if (cmd.dryRun !== undefined && cmd.index?.unique === undefined)
      throw commandError(ErrorCodes.InvalidOptions, "dryRun: true is only supported with unique: true");
    if (VALIDATION_FIELDS.some((f) => cmd[f] !== undefined)) {
      if (isView(coll)) throw commandError(ErrorCodes.InvalidOptions, `Cannot specify validation options for a view: ${ns(ctx, name)}`);
      checkValidationOptions(cmd, "collMod");
      for (const f of VALIDATION_FIELDS) if (cmd[f] !== undefined) coll.options[f] = cmd[f];
    }
    if (cmd.index !== undefined) modifyIndex(coll, cmd.index, reply, ns(ctx, name), cmd.dryRun === true);
    if (cmd.dryRun === true) return { ok: 1 };
    if (cmd.changeStreamPreAndPostImages !== undefined) {
      const v = cmd.changeStreamPreAndPostImages as Document;
      if (v === null || typeof v !== "object" || typeof v.enabled !== "boolean") {
        throw commandError(ErrorCodes.TypeMismatch, "BSON field 'collMod.changeStreamPreAndPostImages.enabled' is missing or has the wrong type");
      }
      if (v.enabled) coll.options.changeStreamPreAndPostImages = { enabled: true };
      else delete coll.options.changeStreamPreAndPostImages;
    }
    reply.ok = 1;
    return reply;
  },
};
