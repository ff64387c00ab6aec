// explain for find: which index the planner picked and how much it examined, in the shape of mongod's
// queryPlanner/executionStats (enough for tests to assert that a query uses an index).
import type { Document } from "bson";
import { parseSort } from "../bson-order.ts";
import type { CommandHandler } from "../context.ts";
import { commandError, ErrorCodes } from "../errors.ts";
import { findMatches, type ExecutionStats } from "../planner.ts";
import { effectiveCollation } from "../collation.ts";
import { collectionName, ns, optionalDocument, optionalNumber } from "./common.ts";

function winningPlan(stats: ExecutionStats): Document {
  if (!stats.index) return { stage: "COLLSCAN", direction: "forward" };
  return {
    stage: "FETCH",
    inputStage: {
      stage: "IXSCAN",
      keyPattern: stats.index.keyPattern,
      indexName: stats.index.name,
      isMultiKey: stats.index.multikey,
      isUnique: stats.index.unique,
      isSparse: stats.index.sparse,
      isPartial: stats.index.partialFilterExpression !== undefined,
      direction: stats.direction === -1 ? "backward" : "forward",
    },
  };
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
    const plan = winningPlan(stats);
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
