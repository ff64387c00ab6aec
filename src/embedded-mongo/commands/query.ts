// Read commands: find, getMore, killCursors, count, distinct, aggregate.
import type { Document } from "bson";
import { compareValues, parseSort, sortDocuments, valuesAtPath } from "../bson-order.ts";
import type { CommandContext, CommandHandler } from "../context.ts";
import { commandError, ErrorCodes } from "../errors.ts";
import { runAggregation } from "../matcher.ts";
import { findDocuments, type FindOptions } from "../planner.ts";
import { cloneDocument } from "../update.ts";
import { collectionName, cursorReply, ns, optionalDocument, optionalNumber, projector } from "./common.ts";

function cursorOptions(cmd: Document): { batchSize?: number } {
  const cursor = optionalDocument(cmd, "cursor");
  const batchSize = cursor ? optionalNumber(cursor, "batchSize") : undefined;
  if (batchSize !== undefined && batchSize < 0) throw commandError(ErrorCodes.BadValue, "BatchSize value must be non-negative, but received: " + batchSize);
  return { batchSize };
}

// Stages that build new documents in mingo; those that may write into their input get cloned input.
const MUTATING_STAGES = new Set(["$addFields", "$set", "$unset", "$lookup", "$graphLookup", "$setWindowFields", "$fill", "$densify"]);

function runPipeline(ctx: CommandContext, name: string, pipeline: Document[]): Document[] {
  const coll = ctx.server.store.get(ctx.db, name);
  for (const stage of pipeline) {
    const op = Object.keys(stage)[0];
    if (op === "$changeStream") {
      throw commandError(ErrorCodes.Location40573, "The $changeStream stage is only supported on replica sets");
    }
    if (op === "$out" || op === "$merge") throw commandError(ErrorCodes.IllegalOperation, `${op} is not supported by the embedded server`);
  }
  // Leading $match/$sort/$skip/$limit run through the planner so they use indexes and stop early.
  const find: FindOptions = {};
  let filter: Document = {};
  let i = 0;
  if (pipeline[i]?.$match) filter = pipeline[i++].$match as Document;
  if (pipeline[i]?.$sort) find.sort = parseSort(pipeline[i++].$sort);
  if (pipeline[i]?.$skip !== undefined && pipeline[i + 1]?.$limit !== undefined) {
    find.skip = Number(pipeline[i++].$skip);
    find.limit = Number(pipeline[i++].$limit);
  } else if (pipeline[i]?.$limit !== undefined) {
    find.limit = Number(pipeline[i++].$limit);
  }
  let docs = findDocuments(coll, filter, find);
  // $lookup / $graphLookup read collections of the same database.
  const collectionResolver = (from: string) => [...(ctx.server.store.get(ctx.db, from)?.docs.values() ?? [])];
  let segment: Document[] = [];
  const flush = () => {
    if (!segment.length) return;
    const mutates = segment.some((s) => MUTATING_STAGES.has(Object.keys(s)[0]));
    docs = runAggregation(mutates ? docs.map(cloneDocument) : docs, segment, collectionResolver);
    segment = [];
  };
  for (; i < pipeline.length; i++) {
    const stage = pipeline[i];
    if (stage.$sort) {
      // mingo's sort does not know BSON type order (ObjectId, Long...); ours does.
      flush();
      docs = sortDocuments([...docs], parseSort(stage.$sort));
    } else segment.push(stage);
  }
  flush();
  return docs;
}

export const queryCommands: Record<string, CommandHandler> = {
  find: (cmd, ctx) => {
    const name = collectionName(cmd, "find");
    const coll = ctx.server.store.get(ctx.db, name);
    let limit = optionalNumber(cmd, "limit");
    let singleBatch = cmd.singleBatch === true;
    if (limit !== undefined && limit < 0) {
      limit = -limit; // legacy negative limit: one batch only
      singleBatch = true;
    }
    const skip = optionalNumber(cmd, "skip");
    if (skip !== undefined && skip < 0) throw commandError(ErrorCodes.BadValue, "Skip value must be non-negative, but received: " + skip);
    const batchSize = optionalNumber(cmd, "batchSize");
    if (batchSize !== undefined && batchSize < 0) throw commandError(ErrorCodes.BadValue, "BatchSize value must be non-negative, but received: " + batchSize);
    const docs = findDocuments(coll, optionalDocument(cmd, "filter") ?? {}, {
      sort: parseSort(optionalDocument(cmd, "sort")),
      skip,
      limit,
      hint: cmd.hint,
    });
    const batch = ctx.server.cursors.openCursor(ns(ctx, name), docs, batchSize, singleBatch, projector(optionalDocument(cmd, "projection")));
    return cursorReply(ns(ctx, name), batch, "firstBatch");
  },

  getMore: (cmd, ctx) => {
    const name = collectionName(cmd, "collection");
    const batch = ctx.server.cursors.getMore(cmd.getMore, ns(ctx, name), optionalNumber(cmd, "batchSize"));
    return cursorReply(ns(ctx, name), batch, "nextBatch");
  },

  killCursors: (cmd, ctx) => {
    collectionName(cmd, "killCursors");
    const ids = Array.isArray(cmd.cursors) ? cmd.cursors : [];
    const { killed, notFound } = ctx.server.cursors.kill(ids);
    return { cursorsKilled: killed, cursorsNotFound: notFound, cursorsAlive: [], cursorsUnknown: [], ok: 1 };
  },

  count: (cmd, ctx) => {
    const name = collectionName(cmd, "count");
    const coll = ctx.server.store.get(ctx.db, name);
    const query = optionalDocument(cmd, "query") ?? {};
    const skip = optionalNumber(cmd, "skip") ?? 0;
    const limit = Math.abs(optionalNumber(cmd, "limit") ?? 0);
    if (!coll) return { n: 0, ok: 1 };
    if (Object.keys(query).length === 0 && !skip && !limit) return { n: coll.docs.size, ok: 1 };
    return { n: findDocuments(coll, query, { skip, limit, hint: cmd.hint }).length, ok: 1 };
  },

  distinct: (cmd, ctx) => {
    const name = collectionName(cmd, "distinct");
    const key = cmd.key;
    if (typeof key !== "string") throw commandError(ErrorCodes.TypeMismatch, "BSON field 'distinct.key' is the wrong type, expected type 'string'");
    const docs = findDocuments(ctx.server.store.get(ctx.db, name), optionalDocument(cmd, "query") ?? {});
    const values: unknown[] = [];
    for (const doc of docs) {
      for (const v of valuesAtPath(doc, key)) {
        if (Array.isArray(v)) values.push(...v);
        else values.push(v);
      }
    }
    values.sort(compareValues);
    const unique = values.filter((v, i) => i === 0 || compareValues(v, values[i - 1]) !== 0);
    return { values: unique, ok: 1 };
  },

  aggregate: (cmd, ctx) => {
    if (typeof cmd.aggregate !== "string") {
      const first = Array.isArray(cmd.pipeline) ? Object.keys(cmd.pipeline[0] ?? {})[0] : undefined;
      if (first === "$changeStream") throw commandError(ErrorCodes.Location40573, "The $changeStream stage is only supported on replica sets");
      throw commandError(ErrorCodes.InvalidNamespace, "{aggregate: 1} is not supported by the embedded server");
    }
    const name = cmd.aggregate;
    if (!Array.isArray(cmd.pipeline)) throw commandError(ErrorCodes.TypeMismatch, "'pipeline' option must be specified as an array");
    if (cmd.cursor === undefined && !cmd.explain) {
      throw commandError(ErrorCodes.FailedToParse, "The 'cursor' option is required, except for aggregate with the explain argument");
    }
    const { batchSize } = cursorOptions(cmd);
    const docs = runPipeline(ctx, name, cmd.pipeline as Document[]);
    const batch = ctx.server.cursors.openCursor(ns(ctx, name), docs, batchSize, false);
    return cursorReply(ns(ctx, name), batch, "firstBatch");
  },
};
