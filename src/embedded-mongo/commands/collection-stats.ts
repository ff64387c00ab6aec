// The $collStats stage: `count` and `storageStats` (sizes are the documents' BSON sizes; there is no storage
// engine, so storageSize equals size and index sizes are estimated from their entries). `latencyStats` and
// `queryExecStats` are not implemented and refused.
import { calculateObjectSize, type Document } from "bson";
import { checkReadOptions } from "./command-options.ts";
import { cursorReply } from "./common.ts";
import type { CommandContext, CommandHandler } from "./context.ts";
import { letVariables, runAggregation } from "../query/matcher.ts";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import { isView } from "../storage/views.ts";
import { hostname } from "node:os";

const KNOWN = new Set(["count", "storageStats", "latencyStats", "queryExecStats"]);
// Bytes per index entry assumed for the index sizes (key plus record id, as a B-tree leaf holds them).
const INDEX_ENTRY_BYTES = 24;

/** Checks the stage's place and options (mongod's order: it must come first). */
export function checkCollStatsStage(spec: unknown, position: number): void {
  if (position !== 0) throw commandError(40602, "$collStats is only valid as the first stage in a pipeline", { codeName: "Location40602" });
  if (spec === null || typeof spec !== "object" || Array.isArray(spec))
    throw commandError(ErrorCodes.TypeMismatch, "$collStats must take a nested object but found a non-object");
  for (const [field, value] of Object.entries(spec as Document)) {
    if (!KNOWN.has(field)) throw commandError(40415, `BSON field '$collStats.${field}' is an unknown field.`, { codeName: "Location40415" });
    if (field === "latencyStats" || field === "queryExecStats")
      throw commandError(ErrorCodes.NotImplemented, `$collStats ${field} is not supported by the embedded server`);
    if (value === null || typeof value !== "object" || Array.isArray(value))
      throw commandError(ErrorCodes.TypeMismatch, `BSON field '$collStats.${field}' is the wrong type, expected type 'object'`);
  }
  const storage = (spec as Document).storageStats as Document | undefined;
  for (const field of Object.keys(storage ?? {})) {
    if (field !== "scale") throw commandError(ErrorCodes.NotImplemented, `$collStats storageStats.${field} is not supported by the embedded server`);
  }
  if (storage?.scale !== undefined && !(typeof storage.scale === "number" && Number.isInteger(storage.scale) && storage.scale >= 1))
    throw commandError(ErrorCodes.BadValue, `BSON field 'scale' value must be >= 1, actual value '${String(storage.scale)}'`);
}

/** The one document $collStats produces for db.name. */
export function collStats(ctx: CommandContext, name: string, spec: Document): Document {
  const namespace = `${ctx.db}.${name}`;
  const coll = ctx.server.store.get(ctx.db, name);
  if (isView(coll)) throw commandError(ErrorCodes.CommandNotSupportedOnView, `Namespace ${namespace} is a view, not a collection`);
  const out: Document = { ns: namespace, host: `${hostname()}:0`, localTime: new Date() };
  if (spec.storageStats !== undefined) {
    if (!coll)
      throw commandError(
        ErrorCodes.NamespaceNotFound,
        `Unable to retrieve storageStats in $collStats stage :: caused by :: Collection [${namespace}] not found.`,
      );
    const scale = Number((spec.storageStats as Document).scale ?? 1);
    let size = 0;
    for (const doc of coll.docs.values()) size += calculateObjectSize(doc);
    const count = coll.docs.size;
    const indexSizes: Document = {};
    let totalIndexSize = 0;
    for (const index of coll.indexes) {
      const bytes = index.entries.size * INDEX_ENTRY_BYTES;
      indexSizes[index.name] = Math.floor(bytes / scale);
      totalIndexSize += bytes;
    }
    const stats: Document = { size: Math.floor(size / scale), count };
    if (count > 0) stats.avgObjSize = Math.floor(size / count);
    stats.storageSize = Math.floor(size / scale);
    stats.freeStorageSize = 0;
    stats.capped = coll.options.capped === true;
    if (coll.options.capped === true) {
      if (coll.options.max !== undefined) stats.max = coll.options.max;
      stats.maxSize = Math.floor(Number(coll.options.size ?? 0) / scale);
    }
    stats.nindexes = coll.indexes.length;
    stats.indexBuilds = [];
    stats.totalIndexSize = Math.floor(totalIndexSize / scale);
    stats.totalSize = Math.floor((size + totalIndexSize) / scale);
    stats.indexSizes = indexSizes;
    stats.scaleFactor = scale;
    out.storageStats = stats;
  }
  if (spec.count !== undefined) {
    if (!coll)
      throw commandError(
        ErrorCodes.NamespaceNotFound,
        `Unable to retrieve count in $collStats stage :: caused by :: Collection [${namespace}] not found.`,
      );
    out.count = coll.docs.size;
  }
  return out;
}

/**
 * Wraps aggregate so that a pipeline starting with $collStats on a collection produces its statistics document,
 * then runs the later stages on it; any other aggregate goes to the usual handler (which refuses $collStats
 * elsewhere in a pipeline).
 */
export function withCollStats(commands: Map<string, CommandHandler>): Map<string, CommandHandler> {
  const aggregate = commands.get("aggregate");
  if (!aggregate) return commands;
  commands.set("aggregate", (cmd, ctx) => {
    const first = Array.isArray(cmd.pipeline) ? (cmd.pipeline[0] as Document | undefined) : undefined;
    if (typeof cmd.aggregate !== "string" || !first || typeof first !== "object" || !("$collStats" in first)) return aggregate(cmd, ctx);
    checkReadOptions(cmd, ctx);
    const pipeline = cmd.pipeline as Document[];
    pipeline.forEach((stage, i) => {
      if (stage && typeof stage === "object" && "$collStats" in stage) checkCollStatsStage(stage.$collStats, i);
      const op = Object.keys(stage ?? {})[0];
      if (op === "$out" || op === "$merge")
        throw commandError(ErrorCodes.NotImplemented, `${op} after $collStats is not supported by the embedded server`);
    });
    const stats = collStats(ctx, cmd.aggregate, first.$collStats as Document);
    const resolver = (from: string) => [...(ctx.server.store.get(ctx.db, from)?.docs.values() ?? [])];
    const docs = runAggregation([stats], pipeline.slice(1), resolver, letVariables(cmd.let));
    const namespace = `${ctx.db}.${cmd.aggregate}`;
    const batchSize = (cmd.cursor as Document | undefined)?.batchSize as number | undefined;
    return cursorReply(namespace, ctx.server.cursors.openCursor(namespace, docs, batchSize, false), "firstBatch");
  });
  return commands;
}
