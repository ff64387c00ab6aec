// mingo queries and pipelines with mongod's comparison semantics: $gt/$gte/$lt/$lte compare within one BSON type bracket using
// our BSON order (exact int64, ObjectId bytes, dates), `{$gte: null}` matches missing fields, and $mod never
// matches non-numbers. Everything else is mingo's.
import type { Document } from "bson";
import { Context } from "mingo/core";
import * as accumulatorOperators from "mingo/operators/accumulator";
import * as expressionOperators from "mingo/operators/expression";
import * as pipelineOperators from "mingo/operators/pipeline";
import * as projectionOperators from "mingo/operators/projection";
import * as queryOperators from "mingo/operators/query";
import * as windowOperators from "mingo/operators/window";
import { Aggregator } from "mingo/aggregator";
import { Query } from "mingo/query";
import { compareValues, typeRank, valuesAtPath } from "./bson-order.ts";

/** The values a range operator looks at: each value at the path, and each element of arrays found there. */
function candidates(doc: unknown, path: string): unknown[] {
  const found = valuesAtPath(doc, path);
  if (found.length === 0) return [null]; // missing compares like null
  const out: unknown[] = [];
  for (const v of found) {
    out.push(v);
    if (Array.isArray(v)) out.push(...v);
  }
  return out;
}

function rangeOperator(accept: (c: number) => boolean) {
  return (selector: string, value: unknown) => {
    const rank = typeRank(value);
    return (doc: unknown) => candidates(doc, selector).some((c) => typeRank(c) === rank && accept(compareValues(c, value)));
  };
}

function numeric(v: unknown): number | undefined {
  if (typeof v === "number") return v;
  const t = (v as { _bsontype?: string } | null)?._bsontype;
  return t === "Long" || t === "Int32" || t === "Double" || t === "Decimal128" ? Number(String(v)) : undefined;
}

const $mod = (selector: string, value: unknown) => {
  const [divisor, remainder] = Array.isArray(value) ? value.map(Number) : [NaN, NaN];
  return (doc: unknown) =>
    candidates(doc, selector).some((c) => {
      const n = numeric(c);
      return n !== undefined && Math.trunc(n) % Math.trunc(divisor) === Math.trunc(remainder);
    });
};

const QUERY_CONTEXT = Context.init({
  accumulator: accumulatorOperators,
  expression: expressionOperators,
  pipeline: pipelineOperators,
  projection: projectionOperators,
  query: {
    ...queryOperators,
    $gt: rangeOperator((c) => c > 0),
    $gte: rangeOperator((c) => c >= 0),
    $lt: rangeOperator((c) => c < 0),
    $lte: rangeOperator((c) => c <= 0),
    $mod,
  } as typeof queryOperators,
  window: windowOperators,
});

export function createQuery(filter: Document): Query {
  return new Query(filter, { context: QUERY_CONTEXT });
}

/** Runs pipeline stages with the same query semantics ($match inside later stages included). */
export function runAggregation(docs: Document[], pipeline: Document[], collectionResolver: (name: string) => Document[]): Document[] {
  return new Aggregator(pipeline, { context: QUERY_CONTEXT, collectionResolver }).run(docs) as Document[];
}
