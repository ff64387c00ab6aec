// Read commands: find, getMore, killCursors, count, distinct, aggregate.
import type { Document } from "bson";
import { compareValues, parseSort, sortDocuments, valuesAtPath } from "../query/bson-order.ts";
import type { CommandContext, CommandHandler } from "./context.ts";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import { checkReadOptions } from "./command-options.ts";
import { compileFilter, letVariables, runAggregation } from "../query/matcher.ts";
import { findDocuments, findMatches, type ExecutionStats, type FindOptions } from "../storage/planner.ts";
import { cloneDocument } from "../bson/clone.ts";
import { cursorsToKill, getMoreTarget } from "../bson/cursor-ids.ts";
import { plainNumbers } from "../bson/numbers.ts";
import { countingStage } from "../query/count-stage.ts";
import { isView, resolveView } from "../storage/views.ts";
import { type Collation, parseCollation, sameCollation } from "../query/collation.ts";
import { writeMerge, writeOut } from "./aggregate-output.ts";
import { refuseListSearchIndexesStage } from "./search-indexes.ts";
import { collectionName, cursorReply, ns, optionalDocument, optionalNumber, projector } from "./common.ts";
import { Long } from "bson";
import { atSnapshot } from "./snapshot-reads.ts";
import { snapshotReadTime } from "../replication/snapshot-history.ts";
import { checkListLocalSessionsStage } from "../replication/local-sessions.ts";

/**
 * A read that may run at a snapshot (readConcern level "snapshot"): it then sees the store as of that cluster time,
 * and the reply says which (`cursor.atClusterTime`, or `atClusterTime` for distinct), as mongod's does; the driver
 * pins its snapshot session to that time.
 */
function snapshotRead(handler: CommandHandler): CommandHandler {
  return (cmd, ctx) => {
    const ts = snapshotReadTime(cmd, ctx.server);
    if (!ts) return handler(cmd, ctx);
    const reply = handler(cmd, atSnapshot(ctx, ts));
    if (reply.ok !== 1) return reply;
    if (reply.cursor) (reply.cursor as Document).atClusterTime = ts;
    else reply.atClusterTime = ts;
    return reply;
  };
}

/**
 * find's limit, skip and batchSize, each at least 0 (a negative limit is refused, as by mongod's find command: the
 * drivers send a negative limit as `singleBatch`), checked in the order the command gives them.
 */
function findSizes(cmd: Document): { limit?: number; skip?: number; batchSize?: number } {
  const sizes: { limit?: number; skip?: number; batchSize?: number } = {};
  for (const field of Object.keys(cmd)) {
    if (field !== "limit" && field !== "skip" && field !== "batchSize") continue;
    const value = optionalNumber(cmd, field);
    if (value !== undefined && value < 0)
      throw commandError(ErrorCodes.BadValue, `BSON field '${field}' value must be >= 0, actual value '${value}'`);
    // A fractional double is truncated, as mongod reads these fields as 64-bit integers.
    if (value !== undefined) sizes[field] = Math.trunc(value);
  }
  return sizes;
}

function cursorOptions(cmd: Document): { batchSize: number | undefined } {
  const cursor = optionalDocument(cmd, "cursor");
  const batchSize = cursor ? optionalNumber(cursor, "batchSize") : undefined;
  if (batchSize !== undefined && batchSize < 0)
    throw commandError(ErrorCodes.BadValue, `BatchSize value must be non-negative, but received: ${batchSize}`);
  return { batchSize };
}

// Stages that build new documents in mingo; those that may write into their input get cloned input.
const MUTATING_STAGES = new Set(["$addFields", "$set", "$unset", "$lookup", "$graphLookup", "$setWindowFields", "$fill", "$densify"]);

/**
 * The collation a read runs under: the command's (`{locale: "simple"}`: binary), else the collection's or view's
 * default. A command on a view may only restate the view's own collation, as mongod requires.
 */
function readCollation(cmd: Document, ctx: CommandContext, name: string | undefined): Collation | undefined {
  const coll = name === undefined ? undefined : ctx.server.store.get(ctx.db, name);
  const given = parseCollation(cmd.collation);
  if (given !== undefined && isView(coll) && !sameCollation(given ?? undefined, coll!.collation)) {
    throw commandError(ErrorCodes.OptionNotSupportedOnView, "Cannot override a view's default collation");
  }
  return given === undefined ? coll?.collation : (given ?? undefined);
}

/**
 * Runs a pipeline over a collection (a view's pipeline first), or over no collection (`name` undefined: a
 * database-level aggregate, whose first stage must be $documents). `collation` compares strings (none: binary).
 */
function runPipeline(
  ctx: CommandContext,
  name: string | undefined,
  pipeline: Document[],
  variables?: Document,
  collation?: Collation,
  hint?: unknown,
): Document[] {
  pipeline.forEach((stage, i) => {
    if (stage === null || typeof stage !== "object" || Array.isArray(stage) || Object.keys(stage).length !== 1) {
      throw commandError(40323, "A pipeline stage specification object must contain exactly one field.");
    }
    const op = Object.keys(stage)[0];
    if (op === "$changeStream") {
      throw commandError(ErrorCodes.Location40573, "The $changeStream stage is only supported on replica sets");
    }
    if (op === "$listSearchIndexes") refuseListSearchIndexesStage();
    if ((op === "$out" || op === "$merge") && i !== pipeline.length - 1) {
      throw commandError(40601, `${op} can only be the final stage in the pipeline`);
    }
    if (op === "$listLocalSessions") checkListLocalSessionsStage(name, i);
    if (op === "$currentOp" || op === "$listSessions" || op === "$collStats" || op === "$indexStats" || op === "$planCacheStats") {
      throw commandError(ErrorCodes.NotImplemented, `${op} is not supported by the embedded server`);
    }
  });
  // A trailing $out/$merge writes the results of the stages before it, and the aggregate returns nothing.
  const last = pipeline[pipeline.length - 1];
  if (last && ("$out" in last || "$merge" in last)) {
    // $merge matches existing documents with binary comparisons only.
    if ("$merge" in last && collation)
      throw commandError(ErrorCodes.BadValue, "$merge with a non-simple collation is not supported by the embedded server");
    const docs = runPipeline(ctx, name, pipeline.slice(0, -1), variables, collation, hint);
    if ("$out" in last) writeOut(ctx, last.$out, docs);
    else writeMerge(ctx, last.$merge, docs);
    return [];
  }
  if (name === undefined) {
    const [first = {}] = pipeline;
    if (Object.keys(first)[0] === "$listLocalSessions") {
      const sessions = ctx.server.sessions.local.list(first.$listLocalSessions);
      return runAggregation(sessions, pipeline.slice(1), (from) => [...(ctx.server.store.get(ctx.db, from)?.docs.values() ?? [])], variables);
    }
    if (Object.keys(first)[0] !== "$documents") {
      throw commandError(ErrorCodes.InvalidNamespace, "{aggregate: 1} is not valid for '$match'; a collection is required.");
    }
    return runAggregation([{}], pipeline, (from) => [...(ctx.server.store.get(ctx.db, from)?.docs.values() ?? [])], variables, collation);
  }
  const view = resolveView(ctx.server.store, ctx.db, name);
  if (view) {
    name = view.source;
    pipeline = [...view.pipeline, ...pipeline];
  }
  const coll = ctx.server.store.get(ctx.db, name);
  // Leading $match/$sort/$skip/$limit run through the planner so they use indexes and stop early.
  const find: FindOptions = {};
  let filter: Document = {};
  let i = 0;
  if (pipeline[i]?.$match) filter = pipeline[i++]!.$match as Document;
  // (Only the filter is data: the other stages' numbers are read plain.)
  if (pipeline[i]?.$sort) find.sort = parseSort(plainNumbers(pipeline[i++]!.$sort));
  if (pipeline[i]?.$skip !== undefined && pipeline[i + 1]?.$limit !== undefined) {
    find.skip = Number(plainNumbers(pipeline[i++]!.$skip));
    find.limit = Number(plainNumbers(pipeline[i++]!.$limit));
  } else if (pipeline[i]?.$limit !== undefined) {
    find.limit = Number(plainNumbers(pipeline[i++]!.$limit));
  }
  find.variables = variables;
  find.collation = collation;
  // The hint applies to the scan of the leading stages, as mongod applies it to the pipeline's first stage.
  find.hint = hint;
  let docs = findDocuments(coll, filter, find);
  const count = countingStage(pipeline.slice(i));
  if (count) return docs.length ? [count(docs.length)] : [];
  // $lookup / $graphLookup read collections of the same database.
  const collectionResolver = (from: string) => [...(ctx.server.store.get(ctx.db, from)?.docs.values() ?? [])];
  let segment: Document[] = [];
  const flush = () => {
    if (!segment.length) return;
    const mutates = segment.some((s) => Object.keys(s).some((op) => MUTATING_STAGES.has(op)));
    docs = runAggregation(mutates ? docs.map(cloneDocument) : docs, segment, collectionResolver, variables, collation);
    segment = [];
  };
  for (; i < pipeline.length; i++) {
    const stage = pipeline[i]!;
    if (stage.$sort) {
      // mingo's sort does not know BSON type order (ObjectId, Long...); ours does.
      flush();
      docs = sortDocuments([...docs], parseSort(stage.$sort), collation?.compare);
    } else segment.push(stage);
  }
  flush();
  return docs;
}

export const queryCommands: Record<string, CommandHandler> = {
  find: snapshotRead((cmd, ctx) => {
    const name = collectionName(cmd, "find");
    checkReadOptions(cmd, ctx);
    const variables = letVariables(cmd.let);
    const coll = ctx.server.store.get(ctx.db, name);
    const { limit, skip, batchSize } = findSizes(cmd);
    const singleBatch = cmd.singleBatch === true;
    if (cmd.awaitData === true && cmd.tailable !== true) {
      throw commandError(ErrorCodes.FailedToParse, "Cannot set 'awaitData' without also setting 'tailable'");
    }
    if (cmd.tailable === true) throw commandError(ErrorCodes.NotImplemented, "tailable cursors are not supported by the embedded server");
    const filter = optionalDocument(cmd, "filter") ?? {};
    const sort = optionalDocument(cmd, "sort");
    const projection = optionalDocument(cmd, "projection");
    const collation = readCollation(cmd, ctx, name);
    if (resolveView(ctx.server.store, ctx.db, name)) {
      // mongod runs a find on a view as an aggregate: the view's pipeline, then the find's own stages.
      if (cmd.returnKey === true || cmd.showRecordId === true)
        throw commandError(ErrorCodes.OptionNotSupportedOnView, "returnKey and showRecordId are not supported on a view");
      const stages: Document[] = [{ $match: filter }];
      if (sort && Object.keys(sort).length) stages.push({ $sort: sort });
      if (skip) stages.push({ $skip: skip });
      if (limit) stages.push({ $limit: limit });
      if (projection && Object.keys(projection).length) stages.push({ $project: projection });
      const docs = runPipeline(ctx, name, stages, variables, collation);
      const batch = ctx.server.cursors.openCursor(ns(ctx, name), docs, batchSize, singleBatch);
      return cursorReply(ns(ctx, name), batch, "firstBatch");
    }
    const stats: ExecutionStats = { plan: "", keysExamined: 0, docsExamined: 0 };
    // A missing collection still gets its filter parsed: mongod rejects a bad filter either way.
    if (!coll) compileFilter(filter, variables, collation);
    const matches = coll ? findMatches(coll, filter, { sort: parseSort(sort), skip, limit, hint: cmd.hint, variables, collation }, stats) : [];
    let docs = matches.map((m) => m[1]);
    let project = projector(projection, filter, collation);
    if (cmd.returnKey === true) {
      // The index key of each result under the chosen index ({} without one), as mongod returns it.
      const fields = stats.index?.fields ?? [];
      docs = docs.map((doc) => Object.fromEntries(fields.map(([path]) => [path, valuesAtPath(doc, path)[0] ?? null])));
      project = undefined;
    } else if (cmd.showRecordId === true) {
      const base = project;
      docs = matches.map(([rid, doc]) => ({ ...doc, $recordId: Long.fromNumber(rid) }));
      project = base && ((doc) => ({ ...base(doc), $recordId: doc.$recordId }));
    }
    const batch = ctx.server.cursors.openCursor(ns(ctx, name), docs, batchSize, singleBatch, project);
    return cursorReply(ns(ctx, name), batch, "firstBatch");
  }),

  getMore: (cmd, ctx) => {
    const { id, collection } = getMoreTarget(cmd);
    // The wait budget of an awaitData cursor; this server's find cursors are never one (tailable is refused).
    if (cmd.maxTimeMS !== undefined && ctx.server.cursors.isOpen(id)) {
      throw commandError(ErrorCodes.BadValue, "cannot set maxTimeMS on getMore command for a non-awaitData cursor");
    }
    const batch = ctx.server.cursors.getMore(id, ns(ctx, collection), optionalNumber(cmd, "batchSize"));
    return cursorReply(ns(ctx, collection), batch, "nextBatch");
  },

  killCursors: (cmd, ctx) => {
    collectionName(cmd, "killCursors");
    const { killed, notFound } = ctx.server.cursors.kill(cursorsToKill(cmd));
    return { cursorsKilled: killed, cursorsNotFound: notFound, cursorsAlive: [], cursorsUnknown: [], ok: 1 };
  },

  count: (cmd, ctx) => {
    const name = collectionName(cmd, "count");
    checkReadOptions(cmd, ctx);
    const coll = ctx.server.store.get(ctx.db, name);
    const query = optionalDocument(cmd, "query") ?? {};
    const skip = optionalNumber(cmd, "skip") ?? 0;
    const limit = Math.abs(optionalNumber(cmd, "limit") ?? 0);
    if (resolveView(ctx.server.store, ctx.db, name)) {
      const stages: Document[] = [{ $match: query }];
      if (skip) stages.push({ $skip: skip });
      if (limit) stages.push({ $limit: limit });
      return { n: runPipeline(ctx, name, stages, undefined, readCollation(cmd, ctx, name)).length, ok: 1 };
    }
    const collation = readCollation(cmd, ctx, name);
    if (!coll) {
      compileFilter(query, undefined, collation);
      return { n: 0, ok: 1 };
    }
    if (Object.keys(query).length === 0 && !skip && !limit) return { n: coll.docs.size, ok: 1 };
    return { n: findDocuments(coll, query, { skip, limit, hint: cmd.hint, collation }).length, ok: 1 };
  },

  distinct: snapshotRead((cmd, ctx) => {
    const name = collectionName(cmd, "distinct");
    const key = cmd.key;
    if (typeof key !== "string") throw commandError(ErrorCodes.TypeMismatch, "BSON field 'distinct.key' is the wrong type, expected type 'string'");
    checkReadOptions(cmd, ctx);
    const query = optionalDocument(cmd, "query") ?? {};
    const collation = readCollation(cmd, ctx, name);
    const docs = resolveView(ctx.server.store, ctx.db, name)
      ? runPipeline(ctx, name, [{ $match: query }], undefined, collation)
      : findDocuments(ctx.server.store.get(ctx.db, name), query, { hint: cmd.hint, collation });
    const values: unknown[] = [];
    for (const doc of docs) {
      for (const v of valuesAtPath(doc, key)) {
        if (Array.isArray(v)) values.push(...v);
        else values.push(v);
      }
    }
    // Values equal under the collation are one value: the first found (the sort is stable).
    const strings = collation?.compare;
    values.sort((a, b) => compareValues(a, b, strings));
    const unique = values.filter((v, i) => i === 0 || compareValues(v, values[i - 1], strings) !== 0);
    return { values: unique, ok: 1 };
  }),

  aggregate: snapshotRead((cmd, ctx) => {
    if (typeof cmd.aggregate !== "string" && cmd.aggregate !== 1) {
      throw commandError(ErrorCodes.InvalidNamespace, "Invalid aggregate namespace: the 'aggregate' field must be a collection name or 1");
    }
    // {aggregate: 1} is a database-level aggregate ($documents, ...).
    const name = typeof cmd.aggregate === "string" ? cmd.aggregate : undefined;
    if (!Array.isArray(cmd.pipeline)) throw commandError(ErrorCodes.TypeMismatch, "'pipeline' option must be specified as an array");
    checkReadOptions(cmd, ctx);
    if (cmd.explain) throw commandError(ErrorCodes.NotImplemented, "explain of aggregate is not supported by the embedded server");
    if (cmd.cursor === undefined && !cmd.explain) {
      throw commandError(ErrorCodes.FailedToParse, "The 'cursor' option is required, except for aggregate with the explain argument");
    }
    const { batchSize } = cursorOptions(cmd);
    const docs = runPipeline(ctx, name, cmd.pipeline as Document[], letVariables(cmd.let), readCollation(cmd, ctx, name), cmd.hint);
    const cursorNs = ns(ctx, name ?? "$cmd.aggregate");
    const batch = ctx.server.cursors.openCursor(cursorNs, docs, batchSize, false);
    return cursorReply(cursorNs, batch, "firstBatch");
  }),
};
