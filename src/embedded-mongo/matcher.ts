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
import { CommandError, commandError, ErrorCodes } from "./errors.ts";

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

// `$all` through mingo misses a scalar field equal to the single value; mongod's $all is the AND of equalities
// (or of $elemMatch clauses), each with the usual array semantics, and an empty list matches nothing.
const allMatchers = new Map<string, Query>();
const $all = (selector: string, value: unknown) => {
  if (!Array.isArray(value)) throw commandError(ErrorCodes.BadValue, "$all needs an array");
  if (value.length === 0) return () => false;
  const clauses = value.map((v) => ({ [selector]: v && typeof v === "object" && "$elemMatch" in (v as Document) ? v : { $eq: v } }));
  const key = selector + "\0" + JSON.stringify(value);
  let query = allMatchers.get(key);
  if (!query) {
    query = new Query({ $and: clauses }, { context: QUERY_CONTEXT });
    if (allMatchers.size < 1000) allMatchers.set(key, query);
  }
  const q = query;
  return (doc: unknown) => q.test(doc as Document);
};

const QUERY_CONTEXT: Context = Context.init({
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
    $all,
  } as typeof queryOperators,
  window: windowOperators,
});

/** A compiled filter; `variables` are the command's `let` constants, visible as `$$name` inside `$expr`. */
export function createQuery(filter: Document, variables?: Document): Query {
  let query: Query;
  try {
    query = new Query(filter, { context: QUERY_CONTEXT, variables });
  } catch (err) {
    throw mongodError(err);
  }
  // Some errors only surface when a document is tested (e.g. an unknown expression inside $expr).
  const test = query.test.bind(query);
  try {
    // mingo compiles lazily; mongod rejects a bad filter even when no document is examined.
    test({});
  } catch (err) {
    if (/unknown (top level |query )?operator|unregistered|not registered/.test((err as Error)?.message ?? "")) throw mongodError(err);
  }
  query.test = (doc) => {
    try {
      return test(doc);
    } catch (err) {
      throw mongodError(err);
    }
  };
  return query;
}

/** Runs pipeline stages with the same query semantics ($match inside later stages included). */
export function runAggregation(
  docs: Document[],
  pipeline: Document[],
  collectionResolver: (name: string) => Document[],
  variables?: Document,
): Document[] {
  try {
    return new Aggregator(pipeline, { context: QUERY_CONTEXT, collectionResolver, variables }).run(docs) as Document[];
  } catch (err) {
    const unknownAccumulator = /^accumulator '(\$\w+)' is not registered/.exec((err as Error)?.message ?? "");
    if (unknownAccumulator && pipeline.some((s) => "$group" in s && JSON.stringify(s).includes(`"${unknownAccumulator[1]}"`))) {
      throw commandError(15952, `unknown group operator '${unknownAccumulator[1]}'`);
    }
    throw mongodError(err);
  }
}

/** The values of a command's `let` document: each is an expression, evaluated once (constants, $$NOW...). */
export function letVariables(spec: unknown): Document | undefined {
  if (spec === undefined || spec === null) return undefined;
  if (typeof spec !== "object" || Array.isArray(spec))
    throw commandError(ErrorCodes.TypeMismatch, "BSON field 'let' is the wrong type, expected type 'object'");
  const names = Object.keys(spec as Document);
  for (const name of names) {
    if (!/^[a-z\u0080-\uffff][\w\u0080-\uffff]*$/.test(name)) {
      throw commandError(16870, `'${name}' starts with an invalid character for a user variable name`);
    }
  }
  if (names.length === 0) return undefined;
  const [values] = runAggregation([{}], [{ $replaceWith: spec as Document }], () => []);
  return values;
}

/** mingo's parse and evaluation errors as the CommandError mongod answers for the same mistake. */
export function mongodError(err: unknown): CommandError {
  if (err instanceof CommandError) return err;
  const message = (err as Error)?.message ?? String(err);
  let m: RegExpExecArray | null;
  if ((m = /^unknown top level operator: (\S+)/.exec(message))) {
    return commandError(
      ErrorCodes.BadValue,
      `unknown top level operator: ${m[1]}. If you have a field name that starts with a '$' symbol, consider using $getField or $setField.`,
    );
  }
  if ((m = /^unknown query operator (\S+)/.exec(message))) return commandError(ErrorCodes.BadValue, `unknown operator: ${m[1]}`);
  if ((m = /^unregistered pipeline operator (\$\w+)/.exec(message)))
    return commandError(ErrorCodes.Location40324, `Unrecognized pipeline stage name: '${m[1]}'`);
  if ((m = /^accumulator '(\$\w+)' is not registered/.exec(message)))
    return commandError(ErrorCodes.InvalidPipelineOperator, `Unrecognized expression '${m[1]}'`);
  if ((m = /(?:unregistered|unknown|unsupported) (?:expression )?operator:? '?(\$\w+)/i.exec(message))) {
    return commandError(ErrorCodes.InvalidPipelineOperator, `Unrecognized expression '${m[1]}'`);
  }
  if ((m = /^Use of undefined variable: (\w+)/.exec(message))) return commandError(17276, `Use of undefined variable: ${m[1]}`);
  if (err instanceof SyntaxError && message.startsWith("Invalid regular expression"))
    return commandError(51091, `Regular expression is invalid: ${message}`);
  return commandError(ErrorCodes.BadValue, message);
}
