// mingo queries and pipelines with mongod's comparison semantics: $gt/$gte/$lt/$lte compare within one BSON type bracket using
// our BSON order (exact int64, ObjectId bytes, dates), `{$gte: null}` matches missing fields, and $mod never
// matches non-numbers; the comparison expressions ($eq to $cmp) order any two values in BSON order, a missing field
// lowest; numbers of every BSON type are compared by value and told apart by $type (number-operators.ts), and
// pipelines compute with plain JS numbers. Everything else is mingo's.
import { EJSON, type Document } from "bson";
import { Context, evalExpr } from "mingo/core";
import * as accumulatorOperators from "mingo/operators/accumulator";
import * as expressionOperators from "mingo/operators/expression";
import * as pipelineOperators from "mingo/operators/pipeline";
import * as projectionOperators from "mingo/operators/projection";
import * as queryOperators from "mingo/operators/query";
import * as windowOperators from "mingo/operators/window";
import { Aggregator } from "mingo/aggregator";
import type { Iterator } from "mingo/lazy";
import { Query } from "mingo/query";
import { compareValues, containsString, isPlainObject, TypeRank, typeRank } from "./bson-order.ts";
import type { Collation, StringCompare } from "./collation.ts";
import { CommandError, commandError, ErrorCodes } from "../bson/errors.ts";
import { candidates, compileSimpleFilter } from "./simple-filter.ts";
import { copierForExclusions } from "./exclusion-copies.ts";
import { plainNumbers, restoreNumbers } from "../bson/numbers.ts";
import { numberAwareOperators, type QueryOp } from "./number-operators.ts";
import {
  inPlainOperator,
  collatedAccumulators,
  plainWithOrigins,
  prepareExpressions,
  storedDocument,
  typedAccumulators,
  typedExpressionOperators,
  typedGroupKeys,
} from "./typed-arithmetic.ts";
import { parseUnwind, unwind } from "./unwind.ts";

function rangeOperator(accept: (c: number) => boolean, strings?: StringCompare) {
  return (selector: string, value: unknown) => {
    const rank = typeRank(value);
    return (doc: unknown) => candidates(doc, selector).some((c) => typeRank(c) === rank && accept(compareValues(c, value, strings)));
  };
}

function numeric(v: unknown): number | undefined {
  if (typeof v === "number") return v;
  const t = (v as { _bsontype?: string } | null)?._bsontype;
  return t === "Long" || t === "Int32" || t === "Double" || t === "Decimal128" ? Number(String(v)) : undefined;
}

const $mod = (selector: string, value: unknown) => {
  const [divisor = NaN, remainder = NaN] = Array.isArray(value) ? plainNumbers(value).map(Number) : [];
  return (doc: unknown) =>
    candidates(doc, selector).some((c) => {
      const n = numeric(c);
      return n !== undefined && Math.trunc(n) % Math.trunc(divisor) === Math.trunc(remainder);
    });
};

/** A regex without the global and sticky flags, whose `test` keeps no state between calls. */
function statelessRegex(pattern: RegExp): RegExp {
  return /[gy]/.test(pattern.flags) ? new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, "")) : pattern;
}

// A regex matches a string at the path or among the elements of an array there; mingo would also look inside
// arrays nested in that array, which mongod never does.
const $regex = (selector: string, value: unknown) => {
  const pattern = statelessRegex(value instanceof RegExp ? value : new RegExp(String(value)));
  return (doc: unknown) => candidates(doc, selector).some((c) => typeof c === "string" && pattern.test(c));
};

// `$all` through mingo misses a scalar field equal to the single value; mongod's $all is the AND of equalities
// (of matches for a regex, of $elemMatch clauses), each with the usual array semantics, and an empty list matches
// nothing.
const allMatchers = new Map<string, Query>();
const $all = (selector: string, value: unknown, options?: { context?: Context }) => {
  if (!Array.isArray(value)) throw commandError(ErrorCodes.BadValue, "$all needs an array");
  if (value.length === 0) return () => false;
  const patterns = value.filter((v): v is RegExp => v instanceof RegExp).map((r) => $regex(selector, r));
  const matchesPatterns = (doc: unknown) => patterns.every((matches) => matches(doc));
  const clauses = value
    .filter((v) => !(v instanceof RegExp))
    .map((v) => ({ [selector]: v && typeof v === "object" && "$elemMatch" in (v as Document) ? v : { $eq: v } }));
  if (clauses.length === 0) return matchesPatterns;
  const context = options?.context ?? QUERY_CONTEXT;
  if (context !== QUERY_CONTEXT) {
    const q = new Query({ $and: clauses }, { context });
    return (doc: unknown) => matchesPatterns(doc) && q.test(doc as Document);
  }
  // Canonical Extended JSON keeps every type apart (JSON.stringify would give an ObjectId the key of its hex
  // string), so two different lists never share a compiled query.
  const key = `${selector}\0${EJSON.stringify(clauses, { relaxed: false })}`;
  let query = allMatchers.get(key);
  if (!query) {
    query = new Query({ $and: clauses }, { context: QUERY_CONTEXT });
    if (allMatchers.size < 1000) allMatchers.set(key, query);
  }
  const q = query;
  return (doc: unknown) => matchesPatterns(doc) && q.test(doc as Document);
};

/**
 * Two values as aggregation expressions compare them: any two values in BSON order (no type brackets: `{$lte: [null,
 * <date>]}` is true), a missing field below every value but MinKey (so it equals no null).
 */
function compareExpressionValues(a: unknown, b: unknown, strings?: StringCompare): number {
  if (a === undefined || b === undefined) {
    if (a === b) return 0;
    const present = a === undefined ? b : a;
    const missingFirst = typeRank(present) === TypeRank.MinKey ? 1 : -1;
    return a === undefined ? missingFirst : -missingFirst;
  }
  return compareValues(a, b, strings);
}

type ComparisonExpressionName = "$eq" | "$ne" | "$gt" | "$gte" | "$lt" | "$lte" | "$cmp";

/** The comparison expressions, compared as mongod compares (strings under `strings`, a collation's, when given). */
function comparisonExpressions(strings?: StringCompare): Record<ComparisonExpressionName, ExprOp> {
  const mingo = expressionOperators as unknown as Record<ComparisonExpressionName, ExprOp>;
  const comparison =
    (name: ComparisonExpressionName, answer: (c: number) => unknown): ExprOp =>
    (obj, expr, options) => {
      const args = evalExpr(obj, expr, options as never) as unknown[];
      // Anything but two arguments: mingo's error.
      if (!Array.isArray(args) || args.length !== 2) return mingo[name](obj, expr, options);
      return answer(compareExpressionValues(args[0], args[1], strings));
    };
  return {
    $eq: comparison("$eq", (c) => c === 0),
    $ne: comparison("$ne", (c) => c !== 0),
    $gt: comparison("$gt", (c) => c > 0),
    $gte: comparison("$gte", (c) => c >= 0),
    $lt: comparison("$lt", (c) => c < 0),
    $lte: comparison("$lte", (c) => c <= 0),
    $cmp: comparison("$cmp", (c) => Math.sign(c)),
  };
}

/** mingo's operators with numbers of every BSON type compared, typed and computed as mongod does. */
const NUMBER_AWARE = numberAwareOperators(queryOperators as unknown as Parameters<typeof numberAwareOperators>[0]);

type PipelineStage = (collection: Iterator, expr: Document, options: unknown) => Iterator;
const MINGO_PROJECT = (pipelineOperators as unknown as Record<"$project", PipelineStage>).$project;

/** mingo's `$project`, given copies of the documents along the paths it excludes (exclusion-copies.ts). */
const $project: PipelineStage = (collection, expr, options) => {
  const copy = copierForExclusions(expr);
  return MINGO_PROJECT(copy ? collection.map((doc) => copy(doc as Document)) : collection, expr, options);
};

/** mingo's stages, with `$project` leaving the documents it is given as they were. */
const PIPELINE_OPERATORS = { ...pipelineOperators, $project } as unknown as typeof pipelineOperators;

const QUERY_CONTEXT: Context = Context.init({
  accumulator: { ...accumulatorOperators, ...typedAccumulators() } as typeof accumulatorOperators,
  expression: typedExpressionOperators({ ...expressionOperators, ...comparisonExpressions() } as unknown as Record<
    string,
    ExprOp
  >) as unknown as typeof expressionOperators,
  pipeline: PIPELINE_OPERATORS,
  projection: projectionOperators,
  query: {
    ...queryOperators,
    ...NUMBER_AWARE,
    $gt: rangeOperator((c) => c > 0),
    $gte: rangeOperator((c) => c >= 0),
    $lt: rangeOperator((c) => c < 0),
    $lte: rangeOperator((c) => c <= 0),
    $mod,
    $all,
    $regex,
  } as typeof queryOperators,
  window: windowOperators,
});

// Under a collation (other than the simple one), every operator that compares two strings compares them with the
// collation; those that do not see a string keep mingo's (and the simple path's) behaviour. Operators and stages
// whose string comparisons are not collated here refuse to run rather than compare binary.
type ExprOp = (obj: unknown, expr: unknown, options: unknown) => unknown;
type AccOp = (coll: unknown[], expr: unknown, options: unknown) => unknown;
type StageOp = (coll: { transform: (f: (items: unknown[]) => unknown) => unknown }, expr: Document, options: unknown) => unknown;

/** Expression operators that cannot compare strings under a collation here: refused when strings meet. */
const STRING_REFUSING_EXPRESSIONS = [
  "$in",
  "$indexOfArray",
  "$setUnion",
  "$setIntersection",
  "$setDifference",
  "$setEquals",
  "$setIsSubset",
  "$sortArray",
] as const;
/** The expression operators wrapped for a collation. */
type CollatedExpressionName = "$eq" | "$ne" | "$gt" | "$gte" | "$lt" | "$lte" | "$cmp" | (typeof STRING_REFUSING_EXPRESSIONS)[number];

function notCollated(name: string): never {
  throw commandError(ErrorCodes.BadValue, `${name} with a non-simple collation is not supported by the embedded server`);
}

/** Maps each value to the first value seen that is equal to it under the collation ($group keys). */
class Representatives {
  private readonly sorted: unknown[] = [];
  constructor(private readonly strings: StringCompare) {}
  of(v: unknown): unknown {
    if (v === undefined || !containsString(v)) return v;
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const c = compareValues(this.sorted[mid], v, this.strings);
      if (c === 0) return this.sorted[mid];
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    this.sorted.splice(lo, 0, v);
    return v;
  }
}

const collatedContexts = new Map<string, Context>();

function collatedContext(collation: Collation): Context {
  const cached = collatedContexts.get(collation.id);
  if (cached) return cached;
  const strings = collation.compare;
  // The number-aware operators, typed by the signature they are called with here (only the ones wrapped below).
  const query = NUMBER_AWARE;
  const eqTest = (selector: string, value: unknown) => (doc: unknown) =>
    candidates(doc, selector).some((c) => compareValues(c, value, strings) === 0);
  const $eq: QueryOp = (selector, value, options) => (containsString(value) ? eqTest(selector, value) : query.$eq(selector, value, options));
  const $ne: QueryOp = (selector, value, options) => {
    if (!containsString(value)) return query.$ne(selector, value, options);
    const eq = eqTest(selector, value);
    return (doc) => !eq(doc);
  };
  const $in: QueryOp = (selector, value, options) => {
    if (!Array.isArray(value)) return query.$in(selector, value, options);
    const collated = value.filter((v) => containsString(v) && !(v instanceof RegExp));
    if (collated.length === 0) return query.$in(selector, value, options);
    const rest = value.filter((v) => !collated.includes(v));
    const others = rest.length ? query.$in(selector, rest, options) : () => false;
    const tests = collated.map((v) => eqTest(selector, v));
    return (doc) => others(doc) || tests.some((t) => t(doc));
  };
  const $nin: QueryOp = (selector, value, options) => {
    const test = $in(selector, value, options);
    return (doc) => !test(doc);
  };
  const expression = expressionOperators as unknown as Record<CollatedExpressionName, ExprOp>;
  const refuseStringsExpr =
    (name: CollatedExpressionName): ExprOp =>
    (obj, expr, options) => {
      if (containsString(evalExpr(obj, expr, options as never))) notCollated(name);
      return expression[name](obj, expr, options);
    };
  // $min, $max and $addToSet compare strings under the collation.
  const collated = collatedAccumulators(strings);
  const pipeline = pipelineOperators as unknown as Record<"$group" | "$sort", StageOp>;
  const $group: StageOp = (coll, expr, options) => {
    if (!("_id" in expr)) return pipeline.$group(coll, expr, options);
    const representatives = new Representatives(strings);
    return pipeline.$group(coll, { ...expr, _id: { $__collationKey: { expr: expr._id, representatives } } }, options);
  };
  const $__collationKey: ExprOp = (obj, spec, options) => {
    const { expr, representatives } = spec as { expr: unknown; representatives: Representatives };
    return representatives.of(evalExpr(obj, expr, options as never));
  };
  const refuseStage =
    (name: string): StageOp =>
    () =>
      notCollated(name);
  const refuseAcc =
    (name: string): AccOp =>
    () =>
      notCollated(name);
  const context = Context.init({
    accumulator: {
      ...accumulatorOperators,
      ...typedAccumulators(),
      ...collated,
      ...Object.fromEntries(["$maxN", "$minN", "$top", "$topN", "$bottom", "$bottomN"].map((n) => [n, refuseAcc(n)])),
    } as unknown as typeof accumulatorOperators,
    expression: typedExpressionOperators(
      {
        ...expressionOperators,
        ...comparisonExpressions(strings),
        $__collationKey,
        ...Object.fromEntries(STRING_REFUSING_EXPRESSIONS.map((n) => [n, refuseStringsExpr(n)])),
      } as unknown as Record<string, ExprOp>,
      collated,
    ) as unknown as typeof expressionOperators,
    pipeline: {
      ...PIPELINE_OPERATORS,
      $group,
      $sortByCount: (coll: Parameters<StageOp>[0], expr: unknown, options: unknown) =>
        pipeline.$sort($group(coll, { _id: expr, count: { $sum: 1 } }, options) as never, { count: -1 }, options),
      ...Object.fromEntries(
        ["$bucket", "$bucketAuto", "$lookup", "$graphLookup", "$setWindowFields", "$densify", "$fill", "$unionWith"].map((n) => [n, refuseStage(n)]),
      ),
    } as unknown as typeof pipelineOperators,
    projection: projectionOperators,
    query: {
      ...queryOperators,
      ...NUMBER_AWARE,
      $eq,
      $ne,
      $in,
      $nin,
      $gt: rangeOperator((c) => c > 0, strings),
      $gte: rangeOperator((c) => c >= 0, strings),
      $lt: rangeOperator((c) => c < 0, strings),
      $lte: rangeOperator((c) => c <= 0, strings),
      $mod,
      $all,
      $regex,
    } as unknown as typeof queryOperators,
    window: windowOperators,
  });
  if (collatedContexts.size < 100) collatedContexts.set(collation.id, context);
  return context;
}

function contextFor(collation: Collation | undefined): Context {
  return collation ? collatedContext(collation) : QUERY_CONTEXT;
}

/**
 * A compiled filter; `variables` are the command's `let` constants, visible as `$$name` inside `$expr`;
 * `collation` (none: binary) compares strings.
 */
export function createQuery(filter: Document, variables?: Document, collation?: Collation): Query {
  let query: Query;
  try {
    // A filter reads the `let` variables as plain numbers, as it reads documents ($expr).
    query = new Query(filter, { context: contextFor(collation), ...(variables === undefined ? {} : { variables: plainNumbers(variables) }) });
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

/**
 * The test of a filter (undefined: an empty filter, which every document passes): a plain comparison filter is
 * tested directly (simple-filter.ts), any other by a compiled query.
 */
export function compileFilter(filter: Document | undefined, variables?: Document, collation?: Collation): ((doc: Document) => boolean) | undefined {
  if (!filter || Object.keys(filter).length === 0) return undefined;
  if (!collation && !variables) {
    const simple = compileSimpleFilter(filter);
    if (simple) return simple;
  }
  const query = createQuery(filter, variables, collation);
  return (doc) => query.test(doc);
}

/** Runs pipeline stages with the same query semantics ($match inside later stages included). */
export function runAggregation(
  docs: Document[],
  pipeline: Document[],
  collectionResolver: (name: string) => Document[],
  variables?: Document,
  collation?: Collation,
): Document[] {
  // mingo computes with JS numbers: each stage sees plain ones, the typed operators compute from the typed
  // documents behind them (typed-arithmetic.ts), a document a stage passes through unchanged ($match, $limit...) is
  // answered as stored, and a stage reshaping documents one for one keeps the types of the values it left alone.
  const options = {
    context: contextFor(collation),
    collectionResolver: (name: string) => collectionResolver(name).map(plainWithOrigins),
    // The typed operators read the `let` variables typed (typed-arithmetic.ts), mingo's plain.
    ...(variables === undefined ? {} : { variables: plainNumbers(variables), typedVariables: variables }),
  };
  try {
    let current = docs;
    for (const [k, stage] of prepareExpressions(pipeline).entries()) {
      const name = Object.keys(stage)[0]!;
      const unwinding = name === "$unwind" ? parseUnwind(stage.$unwind) : undefined;
      if (unwinding) {
        current = unwind(current, unwinding);
        continue;
      }
      const input = current.map(plainWithOrigins);
      // $setWindowFields reorders documents and copies each ({...doc}, symbols included): a copy of ours says which
      // document it came from.
      if (name === "$setWindowFields") input.forEach((doc, i) => doc !== current[i] && Object.assign(doc, { [SOURCE]: i }));
      const run = () => new Aggregator([stage], options).run(input) as Document[];
      const typed = name === "$group" ? () => typedGroupKeys(run) : run;
      let out = (TYPED_STAGES.has(name) ? typed() : inPlainOperator(run)).map(storedDocument);
      // mingo answers null for a document $redact prunes at its top; mongod drops the document.
      if (name === "$redact") out = out.filter((doc) => doc !== null && doc !== undefined);
      if (RESHAPING_STAGES.has(name) && out.length === current.length) {
        // A document without typed numbers was not copied: nothing of it to give back. What the stage computed stays
        // as computed, even where it equals the value that was there.
        const before = current;
        const computed = computedPaths(stage[name], name !== "$project");
        out = out.map((doc, i) => (input[i] === before[i] ? doc : keepComputed(restoreNumbers(before[i], doc) as Document, doc, computed)));
      }
      if (name === "$lookup" && out.length === current.length) out = out.map(joinedAsStored(current, input, stage.$lookup));
      if (name === "$setWindowFields") out = out.map(windowedAsStored(current, stage.$setWindowFields));
      if (name === "$project") {
        const ordered = projectedOrder(stage.$project as Document);
        const before = current;
        out = out.map((doc, i) => ordered(before[i], doc));
      } else if (name === "$bucket") out = out.map(bucketIds(pipeline[k]!.$bucket));
      else if (name === "$bucketAuto") out = out.map(idFirst);
      current = out;
    }
    return current;
  } catch (err) {
    const unknownAccumulator = /^accumulator '(\$\w+)' is not registered/.exec((err as Error)?.message ?? "");
    if (unknownAccumulator && pipeline.some((s) => "$group" in s && JSON.stringify(s).includes(`"${unknownAccumulator[1]}"`))) {
      throw commandError(15952, `unknown group operator '${unknownAccumulator[1]}'`);
    }
    throw mongodError(err);
  }
}

/** Stages whose output holds the typed operators' values; any other stage sees them as plain numbers. */
const TYPED_STAGES = new Set([
  "$project",
  "$addFields",
  "$set",
  "$replaceRoot",
  "$replaceWith",
  "$group",
  "$bucket",
  "$bucketAuto",
  "$setWindowFields",
]);
/**
 * Stages that make one document of each they are given, in the same order, at the same paths: runAggregation gives
 * the values they leave alone back as they were.
 */
export const RESHAPING_STAGES = new Set(["$project", "$addFields", "$set", "$unset"]);

/**
 * The dotted paths a `$project`, `$addFields` or `$set` specification computes (`$unset`: none): every field of the
 * latter two, a `$project`'s fields but its inclusion and exclusion flags; through embedded objects of fields.
 */
function computedPaths(spec: unknown, allComputed: boolean, prefix = ""): string[][] {
  if (!isPlainObject(spec)) return [];
  return Object.entries(spec).flatMap(([k, v]) => {
    const path = prefix ? `${prefix}.${k}` : k;
    if (!allComputed && (typeof v === "number" || typeof v === "boolean")) return [];
    if (isPlainObject(v) && !Object.keys(v)[0]?.startsWith("$")) return computedPaths(v, allComputed, path);
    return [path.split(".")];
  });
}

/** `restored` with the values `computed` (mingo's output) holds at the computed paths, where restoring changed them. */
function keepComputed(restored: Document, computed: Document, paths: string[][]): Document {
  for (const parts of paths) {
    let into: unknown = restored;
    let from: unknown = computed;
    // The containers restoreNumbers copied are its own; one it left as it was holds the computed values already.
    for (let i = 0; i < parts.length - 1 && into !== from; i++) {
      into = isPlainObject(into) ? into[parts[i]!] : undefined;
      from = isPlainObject(from) ? from[parts[i]!] : undefined;
    }
    if (into !== from && isPlainObject(into) && isPlainObject(from) && parts.at(-1)! in from) into[parts.at(-1)!] = from[parts.at(-1)!];
  }
  return restored;
}

/** The index of the document a plain copy given to $setWindowFields was made from. */
const SOURCE = Symbol("source");

/** A `$setWindowFields` result with the fields it did not compute as they were in the document it came from. */
function windowedAsStored(before: Document[], spec: unknown): (doc: Document) => Document {
  const output = isPlainObject(spec) && isPlainObject(spec.output) ? Object.keys(spec.output).map((k) => k.split(".")) : [];
  return (doc) => {
    const i = (doc as { [SOURCE]?: number })[SOURCE];
    if (i === undefined) return doc;
    delete (doc as { [SOURCE]?: number })[SOURCE];
    return keepComputed(restoreNumbers(before[i], doc) as Document, doc, output);
  };
}

/**
 * A `$lookup` result (one document for each input, in order) with the input's fields as they were and the joined
 * documents as stored, where a sub-pipeline passed them through.
 */
function joinedAsStored(before: Document[], input: Document[], spec: unknown): (doc: Document, i: number) => Document {
  const as = isPlainObject(spec) && typeof spec.as === "string" && !spec.as.includes(".") ? spec.as : undefined;
  return (doc, i) => {
    const restored = input[i] === before[i] ? doc : (restoreNumbers(before[i], doc) as Document);
    const joined = as === undefined ? undefined : doc[as];
    return Array.isArray(joined) ? { ...restored, [as!]: joined.map((d) => (isPlainObject(d) ? storedDocument(d) : d)) } : restored;
  };
}

/** A `$bucket` result with `_id` first, a number `_id` being the boundary (or default) as the stage gave it. */
function bucketIds(spec: unknown): (doc: Document) => Document {
  const given = isPlainObject(spec) ? [...(Array.isArray(spec.boundaries) ? spec.boundaries : []), spec.default] : [];
  return (doc) => {
    const id = typeof doc._id === "number" ? given.find((b) => plainNumbers(b) === doc._id) : undefined;
    return idFirst(id === undefined ? doc : { ...doc, _id: id });
  };
}

/** The document with `_id` first, where mongod's stages put it. */
function idFirst(doc: Document): Document {
  const keys = Object.keys(doc);
  if (keys[0] === "_id" || !keys.includes("_id")) return doc;
  return { _id: doc._id, ...doc };
}

/**
 * Puts a `$project` result in mongod's order: `_id`, the fields it keeps in the order the input document has them,
 * then the fields it computes in the order the projection names them. An exclusion keeps the input's order.
 */
function projectedOrder(spec: Document): (input: Document | undefined, doc: Document) => Document {
  const computed: string[] = [];
  let included = false;
  for (const [path, v] of Object.entries(spec)) {
    const top = path.split(".")[0]!;
    if (typeof v === "number" || typeof v === "boolean") {
      if (v && top !== "_id") included = true;
    } else if (isPlainObject(v) && !Object.keys(v).some((k) => k.startsWith("$"))) included = true;
    else {
      included = true;
      if (top !== "_id" && !computed.includes(top)) computed.push(top);
    }
  }
  // The order for the input's fields, kept for the next document with the same fields (usually all of them).
  let inputKeys: string[] = [];
  let order: string[] = [];
  return (input, doc) => {
    if (!included || !input) return idFirst(doc);
    const keys = Object.keys(input);
    if (keys.length !== inputKeys.length || keys.some((k, i) => k !== inputKeys[i])) {
      inputKeys = keys;
      order = ["_id", ...keys.filter((k) => k !== "_id" && !computed.includes(k)), ...computed];
    }
    const out: Document = {};
    for (const key of order) if (key in doc) out[key] = doc[key];
    for (const key in doc) if (!(key in out)) out[key] = doc[key];
    return out;
  };
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
