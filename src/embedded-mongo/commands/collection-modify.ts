// collMod: changes an index's expireAfterSeconds or hidden flag, a collection's changeStreamPreAndPostImages, or a
// view's definition, answering like mongod. Options this server would not enforce (validators, capped sizes...)
// are refused, never kept silently.
import type { Document } from "bson";
import { compareValues } from "../bson-order.ts";
import type { CommandHandler } from "../context.ts";
import { commandError, ErrorCodes } from "../errors.ts";
import { isView, validateViewOptions } from "../views.ts";
import { collectionName, GENERIC_COMMAND_FIELDS, ns } from "./common.ts";

const REFUSED = new Set([
  "validator",
  "validationLevel",
  "validationAction",
  "expireAfterSeconds",
  "timeseries",
  "cappedSize",
  "cappedMax",
  "recordIdsReplicated",
]);

function modifyIndex(coll: NonNullable<ReturnType<import("../store.ts").Store["get"]>>, spec: unknown, reply: Document, namespace: string): void {
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
  if (change.expireAfterSeconds === undefined && change.hidden === undefined) {
    throw commandError(ErrorCodes.InvalidOptions, "no expireAfterSeconds or hidden field");
  }
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
      if (!["index", "changeStreamPreAndPostImages", "viewOn", "pipeline"].includes(field)) {
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
    if (cmd.index !== undefined) modifyIndex(coll, cmd.index, reply, ns(ctx, name));
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
