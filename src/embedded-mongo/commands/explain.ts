// explain for find: which index the planner picked and how much it examined, in the shape of mongod's
// queryPlanner/executionStats (enough for tests to assert that a query uses an index).
import type { Document } from "bson";
import { parseSort } from "../query/bson-order.ts";
import type { CollectionIndex } from "../storage/collection-index.ts";
import type { CommandHandler } from "./context.ts";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import { findMatches, type ExecutionStats } from "../storage/planner.ts";
import { effectiveCollation } from "../query/collation.ts";
import { collectionName, ns, optionalDocument, optionalNumber } from "./common.ts";

function indexScan(index: CollectionIndex, direction: 1 | -1 | undefined): Document {
  return {
    stage: "IXSCAN",
    keyPattern: index.keyPattern,
    indexName: index.name,
    isMultiKey: index.multikey,
    isUnique: index.unique,
    isSparse: index.sparse,
    isPartial: index.partialFilterExpression !== undefined,
    direction: direction === -1 ? "backward" : "forward",
  };
}

function winningPlan(stats: ExecutionStats, sort: Document | undefined): Document {
  if (stats.branches) {
    // An $or answered by one index scan per branch: merged in sort order when each branch yields it, else a
    // union sorted afterwards (when a sort is asked).
    const scans = stats.branches.map((b) => indexScan(b.index, b.direction));
    const sortPattern = sort && Object.keys(sort).length > 0 ? sort : undefined;
    if (sortPattern && stats.branches.every((b) => b.sorted)) {
      return { stage: "FETCH", inputStage: { stage: "SORT_MERGE", sortPattern, inputStages: scans } };
    }
    const union = { stage: "FETCH", inputStage: { stage: "OR", inputStages: scans } };
    return sortPattern ? { stage: "SORT", sortPattern, inputStage: union } : union;
  }
  if (!stats.index) return { stage: "COLLSCAN", direction: "forward" };
  return { stage: "FETCH", inputStage: indexScan(stats.index, stats.direction) };
}

export const explainCommands: Record<string, CommandHandler> = {
  explain: (cmd, ctx) => {
    const inner = optionalDocument(cmd, "explain");
    if (!inner || Object.keys(inner)[0] !== "find") {
      throw commandError(ErrorCodes.CommandNotFound, "explain is only supported for find by the embedded server");
    }
    const name = collectionName(inner, "find");
    const filter = optionalDocument(inner, "filter") ?? {};
    const stats: ExecutionStats = { plan: "", keysExamined: 0, docsExamined: 0 };
    const coll = ctx.server.store.get(ctx.db, name);
    const started = Date.now();
    const matches = coll
      ? findMatches(
          coll,
          filter,
          {
            sort: parseSort(optionalDocument(inner, "sort")),
            skip: optionalNumber(inner, "skip"),
            limit: optionalNumber(inner, "limit"),
            hint: inner.hint,
            collation: effectiveCollation(inner.collation, coll.collation),
          },
          stats,
        )
      : [];
    const plan = winningPlan(stats, optionalDocument(inner, "sort"));
    return {
      queryPlanner: { namespace: ns(ctx, name), parsedQuery: filter, winningPlan: plan, rejectedPlans: [] },
      executionStats: {
        executionSuccess: true,
        nReturned: matches.length,
        executionTimeMillis: Date.now() - started,
        totalKeysExamined: stats.keysExamined,
        totalDocsExamined: stats.docsExamined,
        executionStages: plan,
      },
      ok: 1,
    };
  },
};
