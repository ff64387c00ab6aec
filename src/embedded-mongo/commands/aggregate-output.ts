// The writing stages $out and $merge (into the same database): the pipeline's results replace ($out) or are merged
// into ($merge) the target collection. $out is all-or-nothing, as mongod's temporary-collection rename makes it.
import { ObjectId, type Document } from "bson";
import type { Collection } from "../storage/collection.ts";
import type { CommandContext } from "./context.ts";
import { CommandError, commandError, ErrorCodes } from "../bson/errors.ts";
import { formatValue } from "../bson/format.ts";
import { findMatches } from "../storage/planner.ts";
import { runPipelineUpdate } from "../query/update-pipeline.ts";
import { withIdFirst } from "../query/update.ts";
import { isView } from "../storage/views.ts";
import { validateCollectionName } from "../storage/store.ts";
import { validates } from "../query/validation.ts";

function target(ctx: CommandContext, spec: unknown, stage: string): string {
  let db = ctx.db;
  let coll: unknown = spec;
  if (spec && typeof spec === "object" && !Array.isArray(spec)) {
    db = typeof (spec as Document).db === "string" ? (spec as Document).db : ctx.db;
    coll = (spec as Document).coll;
  }
  if (typeof coll !== "string") throw commandError(ErrorCodes.TypeMismatch, `${stage} target collection name must be a string`);
  if (db !== ctx.db) throw commandError(ErrorCodes.NotImplemented, `${stage} into another database is not supported by the embedded server`);
  validateCollectionName(db, coll);
  if (isView(ctx.server.store.get(db, coll)))
    throw commandError(ErrorCodes.CommandNotSupportedOnView, `Namespace ${db}.${coll} is a view, not a collection`);
  // Its documents would have to be validated (and bypassDocumentValidation honoured): not implemented here.
  if (validates(ctx.server.store.get(db, coll)))
    throw commandError(ErrorCodes.InvalidOptions, `${stage} into ${db}.${coll}, which has a validator, is not supported by the embedded server`);
  if (ctx.server.store.get(db, coll)?.timeseries)
    throw commandError(ErrorCodes.InvalidOptions, `${stage} into the time-series collection ${db}.${coll} is not supported by the embedded server`);
  return coll;
}

/** $out: the target's documents become `docs` (its indexes stay); on any error the target is left as it was. */
export function writeOut(ctx: CommandContext, spec: unknown, docs: Document[]): void {
  const name = target(ctx, spec, "$out");
  const store = ctx.server.store;
  const existed = store.get(ctx.db, name) !== undefined;
  const coll = store.ensure(ctx.db, name);
  const old = [...coll.docs.values()];
  for (const rid of [...coll.docs.keys()]) coll.remove(rid);
  try {
    for (const doc of docs) coll.insert(withIdFirst(doc));
  } catch (err) {
    for (const rid of [...coll.docs.keys()]) coll.remove(rid);
    for (const doc of old) coll.insert(doc);
    if (!existed) store.drop(ctx.db, name);
    throw err;
  }
}

function onFields(spec: Document): string[] {
  const on = spec.on ?? "_id";
  const fields = Array.isArray(on) ? on : [on];
  if (fields.length === 0 || fields.some((f) => typeof f !== "string"))
    throw commandError(51186, "$merge 'on' field must be either a string or an array of strings");
  return fields as string[];
}

/** $merge: each result is matched on the `on` fields and replaced, merged, kept, failed or inserted as asked. */
export function writeMerge(ctx: CommandContext, rawSpec: unknown, docs: Document[]): void {
  const spec: Document = typeof rawSpec === "string" ? { into: rawSpec } : (rawSpec as Document);
  if (!spec || typeof spec !== "object") throw commandError(ErrorCodes.TypeMismatch, "$merge requires a string or object argument");
  const name = target(ctx, spec.into, "$merge");
  const on = onFields(spec);
  const whenMatched = spec.whenMatched ?? "merge";
  const whenNotMatched = spec.whenNotMatched ?? "insert";
  const store = ctx.server.store;
  const variables = spec.let as Document | undefined;
  for (const doc of docs) {
    const coll: Collection | undefined = store.get(ctx.db, name);
    const filter: Document = {};
    for (const f of on) {
      const v = f.split(".").reduce<unknown>((cur, p) => (cur && typeof cur === "object" ? (cur as Document)[p] : undefined), doc);
      if (v === undefined && f !== "_id") throw commandError(51132, `$merge write error: 'on' field '${f}' cannot be missing, null or an array`);
      filter[f] = v;
    }
    const withId = doc._id === undefined ? { _id: new ObjectId(), ...doc } : doc;
    const [match] = coll && doc._id !== undefined ? findMatches(coll, filter, { limit: 1 }) : coll ? findMatches(coll, filter, { limit: 1 }) : [];
    if (!match) {
      if (whenNotMatched === "discard") continue;
      if (whenNotMatched === "fail")
        throw commandError(
          13113,
          "$merge could not find a matching document in the target collection for at least one document in the source collection",
        );
      if (whenNotMatched !== "insert")
        throw commandError(ErrorCodes.BadValue, `Enumeration value '${String(whenNotMatched)}' for field 'whenNotMatched' is not a valid value.`);
      store.ensure(ctx.db, name).insert(withIdFirst(withId));
      continue;
    }
    const [rid, existing] = match;
    let next: Document;
    if (Array.isArray(whenMatched)) next = runPipelineUpdate(existing, whenMatched as Document[], { ...(variables ?? {}), new: doc });
    else if (whenMatched === "replace") next = { ...doc, _id: existing._id };
    else if (whenMatched === "merge") next = { ...existing, ...doc, _id: existing._id };
    else if (whenMatched === "keepExisting") continue;
    else if (whenMatched === "fail") {
      throw new CommandError(
        ErrorCodes.DuplicateKey,
        `$merge failed due to a DuplicateKey error :: caused by :: E11000 duplicate key error collection: ${ctx.db}.${name} index: _id_ dup key: { _id: ${formatValue(existing._id)} }`,
        { keyPattern: { _id: 1 }, keyValue: { _id: existing._id } },
      );
    } else throw commandError(ErrorCodes.BadValue, `Enumeration value '${String(whenMatched)}' for field 'whenMatched' is not a valid value.`);
    coll!.replace(rid, withIdFirst(next));
  }
}
