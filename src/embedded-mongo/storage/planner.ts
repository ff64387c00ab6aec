// Query planning and execution: picks the index whose prefix the filter's equality/range predicates (or the sort)
// cover, scans only that key range, and re-checks every candidate with the full mingo matcher.
import type { Document } from "bson";
import type { Query } from "mingo/query";
import {
  compareValues,
  containsString,
  MAX_BOUND,
  MIN_BOUND,
  sortDocuments,
  TypeBound,
  typeRank,
  TypeRank,
  type SortSpec,
} from "../query/bson-order.ts";
import { type Collation, sameCollation, type StringCompare } from "../query/collation.ts";
import type { Collection } from "./collection.ts";
import { type CollectionIndex, entryRid, type IndexEntry } from "./collection-index.ts";
import { compileFilter, createQuery } from "../query/matcher.ts";
import { commandError, ErrorCodes } from "../bson/errors.ts";

/** Predicate bounds of one field: a set of points, or a range inside one type bracket. */
interface FieldBounds {
  /** Points satisfying every predicate on the field (valid while each document has one value there). */
  points?: unknown[];
  /** The points of one equality predicate alone: the bound a multikey index must use, since array elements
   *  may satisfy different predicates (`{$and: [{a: 1}, {a: 2}]}` matches `a: [1, 2]`). */
  anyPoints?: unknown[];
  lo: unknown;
  loInc: boolean;
  hi: unknown;
  hiInc: boolean;
  /** Which ends predicates bound (1 lower, 2 upper): with both, a multikey index may only use one of them. */
  sides: number;
}

// Each option may be given as undefined (the command did not set it): the same as leaving it out.
export interface FindOptions {
  sort?: SortSpec | undefined;
  skip?: number | undefined;
  limit?: number | undefined;
  hint?: unknown;
  /** The command's `let` constants, for `$$name` inside `$expr`. */
  variables?: Document | undefined;
  /** The collation strings compare under (the command's, else the collection's default); undefined: binary. */
  collation?: Collation | undefined;
}

export type Match = [rid: number, doc: Document];

/** What one execution did (the unit tests use it to prove index use; mongod's explain has the same counters). */
export interface ExecutionStats {
  plan: string;
  /** The index used, if any, and the scan direction (for explain). */
  index?: CollectionIndex | undefined;
  direction?: 1 | -1;
  /** For an `$or` answered branch by branch: each branch's index, direction and whether it gave the sort order. */
  branches?: { index: CollectionIndex; direction: 1 | -1; sorted: boolean }[];
  keysExamined: number;
  docsExamined: number;
}

const RANGE_RANKS = new Set<number>([
  TypeRank.Number,
  TypeRank.String,
  TypeRank.Date,
  TypeRank.ObjectId,
  TypeRank.Boolean,
  TypeRank.Timestamp,
  TypeRank.BinData,
]);
const MAX_RANGES = 20_000;

function isOperatorObject(v: unknown): v is Document {
  if (v === null || typeof v !== "object" || Array.isArray(v) || v instanceof Date || v instanceof RegExp) return false;
  if ((v as { _bsontype?: string })._bsontype) return false;
  const [first] = Object.keys(v);
  return first?.startsWith("$") === true;
}

function isPointValue(v: unknown): boolean {
  if (Array.isArray(v) || v instanceof RegExp) return false;
  if (v && typeof v === "object" && (v as { _bsontype?: string })._bsontype === "BSONRegExp") return false;
  return v !== undefined;
}

/** Top-level conjuncts of a filter: its own fields plus those of nested $and clauses. */
function conjuncts(filter: Document, out: [string, unknown][] = []): [string, unknown][] {
  for (const [k, v] of Object.entries(filter)) {
    if (k === "$and" && Array.isArray(v)) for (const sub of v) conjuncts(sub as Document, out);
    else if (!k.startsWith("$")) out.push([k, v]);
  }
  return out;
}

function boundsOf(filter: Document, strings?: StringCompare): Map<string, FieldBounds> {
  const bounds = new Map<string, FieldBounds>();
  const full = (): FieldBounds => ({ lo: MIN_BOUND, loInc: true, hi: MAX_BOUND, hiInc: true, sides: 0 });
  for (const [field, cond] of conjuncts(filter)) {
    const b = bounds.get(field) ?? full();
    let used = false;
    const setPoints = (points: unknown[]) => {
      b.anyPoints ??= points;
      b.points = b.points ? b.points.filter((p) => points.some((q) => compareValues(p, q, strings) === 0)) : points;
      used = true;
    };
    if (!isOperatorObject(cond)) {
      if (isPointValue(cond)) setPoints([cond]);
    } else {
      for (const [op, v] of Object.entries(cond)) {
        if (op === "$eq" && isPointValue(v)) setPoints([v]);
        else if (op === "$in" && Array.isArray(v) && v.every(isPointValue)) setPoints(v);
        else if ((op === "$gt" || op === "$gte") && RANGE_RANKS.has(typeRank(v))) {
          if (compareValues(v, b.lo, strings) > 0 || (compareValues(v, b.lo, strings) === 0 && op === "$gt")) {
            b.lo = v;
            b.loInc = op === "$gte";
          }
          if (b.hi === MAX_BOUND) {
            b.hi = new TypeBound(typeRank(v), 1);
            b.hiInc = true;
          }
          used = true;
          b.sides |= 1;
        } else if ((op === "$lt" || op === "$lte") && RANGE_RANKS.has(typeRank(v))) {
          if (compareValues(v, b.hi, strings) < 0 || (compareValues(v, b.hi, strings) === 0 && op === "$lt")) {
            b.hi = v;
            b.hiInc = op === "$lte";
          }
          if (b.lo === MIN_BOUND) {
            b.lo = new TypeBound(typeRank(v), -1);
            b.loInc = true;
          }
          used = true;
          b.sides |= 2;
        }
      }
    }
    if (used) bounds.set(field, b);
  }
  // Points restricted by a range keep only those inside it.
  for (const b of bounds.values()) {
    if (b.points && (b.lo !== MIN_BOUND || b.hi !== MAX_BOUND)) {
      b.points = b.points.filter((p) => {
        const l = compareValues(p, b.lo, strings);
        const h = compareValues(p, b.hi, strings);
        return (l > 0 || (l === 0 && b.loInc)) && (h < 0 || (h === 0 && b.hiInc));
      });
    }
  }
  return bounds;
}

// One compiled matcher per partial-filter conjunct, to test scalar equality points against it.
const conjunctMatchers = new WeakMap<Document, Map<string, Query>>();

function conjunctMatcher(partial: Document, field: string, cond: unknown): Query {
  let byField = conjunctMatchers.get(partial);
  if (!byField) conjunctMatchers.set(partial, (byField = new Map()));
  let query = byField.get(field);
  if (!query) byField.set(field, (query = createQuery({ [field]: cond } as Document)));
  return query;
}

function docWith(path: string, value: unknown): Document {
  return path.split(".").reduceRight<unknown>((inner, part) => ({ [part]: inner }), value) as Document;
}

/**
 * A partial index can answer a query only when the query implies its filter: each of the filter's conditions
 * appears literally in the query, or the query pins that field to a scalar that satisfies the condition
 * (`{phone: "1"}` implies `{phone: {$type: "string"}}` and `{phone: {$exists: true}}`).
 */
function impliesPartialFilter(filter: Document, partial: Document): boolean {
  const parts = conjuncts(filter);
  return conjuncts(partial).every(([field, cond]) =>
    parts.some(([f, c]) => {
      if (f !== field) return false;
      if (compareValues(c, cond) === 0) return true;
      const point = !isOperatorObject(c) ? c : Object.keys(c).length === 1 && "$eq" in c ? c.$eq : undefined;
      if (
        point === undefined ||
        point === null ||
        Array.isArray(point) ||
        (typeof point === "object" && !(point instanceof Date) && !(point as { _bsontype?: string })._bsontype)
      )
        return false;
      return conjunctMatcher(partial, field, cond).test(docWith(field, point));
    }),
  );
}

/**
 * The fields a partial index's filter conditions that its keys do not: a query that implies the filter gets those
 * conditions answered by the index's membership, as an equality on a key field would narrow it. mongod's plan race
 * finds the same (every entry the partial index yields passes those conditions, where an index beside it without
 * them yields entries that fail them, such as events already fanned out under a `created_at` range).
 */
function partialFilterFields(index: CollectionIndex): number {
  const partial = index.partialFilterExpression;
  if (!partial) return 0;
  return new Set(
    conjuncts(partial)
      .map(([field]) => field)
      .filter((field) => !index.fields.some(([path]) => path === field)),
  ).size;
}

interface Plan {
  index: CollectionIndex;
  ranges: { lo: unknown[]; loInc: boolean; hi: unknown[]; hiInc: boolean }[];
  /** Scan direction that yields the requested sort (0 when the index does not provide it). */
  sortDirection: 0 | 1 | -1;
  /** Fields answered by single equality points, in index order. */
  pointFields: string[];
  rangeUsed: boolean;
  /** How much of the filter the bounds use (equality fields, a range), whatever the sort. */
  selectivity: number;
  /** Preference among candidate plans: exact unique lookups, then longer equality prefixes, ranges, sort. */
  score: number;
  /** Every field of a unique index is answered by equality points: at most one document per point. */
  lookup?: boolean;
}

function planFor(index: CollectionIndex, bounds: Map<string, FieldBounds>, filter: Document, sort: SortSpec): Plan | undefined {
  if (index.partialFilterExpression && !impliesPartialFilter(filter, index.partialFilterExpression)) return undefined;
  let prefixes: unknown[][] = [[]];
  let lastLo: unknown;
  let lastHi: unknown;
  let loInc = true;
  let hiInc = true;
  let eqCount = 0;
  let used = 0;
  let multiPoint = false;
  const pointFields: string[] = [];
  for (const [path, dir] of index.fields) {
    const b = bounds.get(path);
    if (!b) break;
    const fieldPoints = index.multikey ? b.anyPoints : b.points;
    if (fieldPoints) {
      // A sparse index holds no entry for missing fields, so it cannot answer a null lookup.
      if (index.sparse && fieldPoints.some((p) => p === null)) return undefined;
      const points = [...fieldPoints].sort((x, y) => compareValues(x, y, index.collation?.compare) * dir);
      if (points.length > 1) multiPoint = true;
      if (prefixes.length * Math.max(points.length, 1) > MAX_RANGES) break;
      prefixes = prefixes.flatMap((p) => points.map((v) => [...p, v]));
      if (points.length === 1) pointFields.push(path);
      eqCount++;
      used++;
      continue;
    }
    let lo = b.lo;
    let hi = b.hi;
    let li = b.loInc;
    let hiI = b.hiInc;
    if (index.multikey && b.sides === 3) {
      hi = new TypeBound(typeRank(lo), 1);
      hiI = true;
    }
    if (dir === -1) [lo, hi, li, hiI] = [hi, lo, hiI, li];
    lastLo = lo;
    lastHi = hi;
    loInc = li;
    hiInc = hiI;
    used++;
    break;
  }
  const rangeUsed = lastLo !== undefined;
  const ranges = prefixes.map((p) => ({
    lo: rangeUsed ? [...p, lastLo] : p,
    loInc: rangeUsed ? loInc : true,
    hi: rangeUsed ? [...p, lastHi] : p,
    hiInc: rangeUsed ? hiInc : true,
  }));
  let sortDirection: 0 | 1 | -1 = 0;
  if (sort.length && !index.multikey && !multiPoint) {
    // The sort must follow the index fields after the equality prefix, all in the same or all in reverse order. A
    // sort field the filter pins to one value orders nothing (mongod drops it from the sort it needs), wherever it
    // stands in the sort: {a: 1, b: 1} on index {a: 1, b: 1} with a filter {a: 5} is the index's own order.
    const rest = index.fields.slice(eqCount);
    const needed = sort.filter(([path]) => !pointFields.includes(path));
    if (needed.length === 0) sortDirection = 1;
    else if (needed.length <= rest.length) {
      const sign = needed[0]![1] * rest[0]![1];
      if (needed.every(([p, d], i) => rest[i]![0] === p && d * rest[i]![1] === sign)) sortDirection = sign as 1 | -1;
    }
  }
  if (used === 0 && sortDirection === 0) return undefined;
  if (index.sparse && used === 0) return undefined; // a sparse index does not hold every document
  const lookup = index.unique && eqCount === index.fields.length;
  const exactUnique = lookup && !multiPoint;
  const filtered = partialFilterFields(index);
  // A lookup of a few keys of a unique index ({_id: {$in: [...]}}) reads at most that many documents.
  const score =
    (exactUnique ? 1000 : lookup ? 500 : 0) + (eqCount + filtered) * 10 + (rangeUsed ? 5 : 0) + (sortDirection ? 3 : 0) - index.fields.length * 0.01;
  return { index, ranges, sortDirection, score, pointFields, rangeUsed, selectivity: eqCount * 10 + (rangeUsed ? 5 : 0), lookup };
}

/**
 * With a sort and a limit, an index that yields the sorted order lets the scan stop after `limit` matches, while an
 * equality index must read and sort every match; mongod's plan race picks the former, so this bonus outweighs one
 * equality field (but not an index giving both the equality and the order).
 */
const SORTED_LIMIT_BONUS = 15;

/**
 * An index whose collation is not the query's orders and equates strings differently: it may only answer bounds
 * without strings, and never provides the sort order.
 */
function collationAllows(plan: Plan, collation: Collation | undefined): boolean {
  if (sameCollation(plan.index.collation, collation)) return true;
  plan.sortDirection = 0;
  return (
    plan.ranges.every((r) => !containsString(r.lo) && !containsString(r.hi)) &&
    (plan.rangeUsed || plan.pointFields.length > 0 || plan.ranges.some((r) => r.lo.length > 0))
  );
}

/** `{$natural: 1}` (or -1) asks for a collection scan, which is what an unhinted plan without an index does. */
function isNaturalHint(hint: unknown): boolean {
  return hint !== null && typeof hint === "object" && Object.keys(hint as Document)[0] === "$natural";
}

function choosePlan(coll: Collection, filter: Document, sort: SortSpec, hint: unknown, limited = false, collation?: Collation): Plan | undefined {
  const bounds = boundsOf(filter, collation?.compare);
  if (hint !== undefined && hint !== null && !isNaturalHint(hint)) {
    const index = typeof hint === "string" ? coll.index(hint) : coll.indexes.find((i) => compareValues(i.keyPattern, hint) === 0);
    // mongod refuses a hint naming no index (or a hidden one) rather than planning without it.
    if (!index || index.hidden) {
      throw commandError(
        ErrorCodes.BadValue,
        "error processing query: planner returned error :: caused by :: hint provided does not correspond to an existing index",
      );
    }
    if (!index.sparse && !index.partialFilterExpression) {
      const plan = planFor(index, bounds, filter, sort);
      if (plan && collationAllows(plan, collation)) return plan;
      // The whole index, in its order: every document, re-checked by the filter.
      return {
        index,
        ranges: [{ lo: [], loInc: true, hi: [], hiInc: true }],
        sortDirection: 0,
        score: 0,
        pointFields: [],
        rangeUsed: false,
        selectivity: 0,
      };
    }
  }
  if (bounds.size === 0 && sort.length === 0) return undefined;
  let best: Plan | undefined;
  for (const index of coll.indexes) {
    if (index.hidden) continue;
    const plan = planFor(index, bounds, filter, sort);
    if (plan && !collationAllows(plan, collation)) continue;
    if (plan && limited && plan.sortDirection !== 0) plan.score += SORTED_LIMIT_BONUS;
    if (plan && (!best || plan.score > best.score)) best = plan;
  }
  return best;
}

/** Visits index entries inside one key range, in index order or reversed. */
function scanRange(index: CollectionIndex, range: Plan["ranges"][number], reverse: boolean, visit: (e: IndexEntry) => boolean): void {
  const n = range.lo.length;
  const set = index.entries;
  if (!reverse) {
    const start = set.seek((e) => {
      const c = index.compareKeys(e, range.lo);
      return c < 0 || (c === 0 && !range.loInc);
    });
    set.forwardFrom(start, (e) => {
      if (n) {
        const c = index.compareKeys(e, range.hi);
        if (c > 0 || (c === 0 && !range.hiInc)) return false;
      }
      return visit(e);
    });
  } else {
    const end = set.seek((e) => {
      const c = index.compareKeys(e, range.hi);
      return c < 0 || (c === 0 && range.hiInc);
    });
    set.backwardFrom(end, (e) => {
      if (n) {
        const c = index.compareKeys(e, range.lo);
        if (c < 0 || (c === 0 && !range.loInc)) return false;
      }
      return visit(e);
    });
  }
}

function isSimpleScalar(v: unknown): boolean {
  switch (typeof v) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return !Number.isNaN(v);
    case "object":
      return v instanceof Date || (v !== null && (v as { _bsontype?: string })._bsontype === "ObjectId");
    default:
      return false;
  }
}

/**
 * True when the index range alone decides the match: every predicate is a scalar equality on a field the plan
 * looks up as a single point (index keys hold each array element, so `{a: 5}` matching `a: [5, 6]` holds too).
 */
function answeredByIndex(filter: Document, plan: Plan): boolean {
  const keys = Object.keys(filter);
  if (plan.rangeUsed || plan.ranges.length !== 1 || keys.length !== plan.pointFields.length) return false;
  return keys.every((k) => {
    if (!plan.pointFields.includes(k)) return false;
    const v = filter[k];
    if (isSimpleScalar(v)) return true;
    return isOperatorObject(v) && Object.keys(v).length === 1 && isSimpleScalar(v.$eq);
  });
}

/**
 * Visits the documents of a plan's key ranges (each once), in index order or reversed for a descending sort, until
 * `visit` answers false.
 */
function scanPlan(coll: Collection, plan: Plan, stats: ExecutionStats | undefined, visit: (rid: number, doc: Document) => boolean): void {
  // A unique index pinned on every field by single points: one hash probe, no range scan.
  const exactUnique = plan.index.unique && !plan.rangeUsed && plan.ranges.length === 1 && plan.pointFields.length === plan.index.fields.length;
  const owner = exactUnique ? plan.index.hashLookup(plan.ranges[0]!.lo) : undefined;
  if (owner !== undefined) {
    if (stats) stats.keysExamined += owner === null ? 0 : 1;
    const doc = owner === null ? undefined : coll.docs.get(owner);
    if (doc) visit(owner!, doc);
    return;
  }
  const seen = plan.ranges.length > 1 || plan.index.multikey ? new Set<number>() : undefined;
  const reverse = plan.sortDirection === -1;
  for (const range of plan.ranges) {
    let go = true;
    scanRange(plan.index, range, reverse, (e) => {
      if (stats) stats.keysExamined++;
      const rid = entryRid(e);
      if (seen) {
        if (seen.has(rid)) return true;
        seen.add(rid);
      }
      const doc = coll.docs.get(rid);
      go = doc ? visit(rid, doc) : true;
      return go;
    });
    if (!go) break;
  }
}

/** Most `$or` branches planned one by one; a longer `$or` is scanned as a whole. */
const MAX_OR_BRANCHES = 64;

/**
 * A top-level `$or` answered branch by branch, as mongod answers one whose every branch can use an index (with the
 * predicates beside the `$or` pushed into each branch): the union of one index scan per branch. Taken when each
 * branch's bounds use more of the filter than the best plan for the predicates outside the `$or`.
 */
function chooseOrPlan(coll: Collection, filter: Document, sort: SortSpec, single: Plan | undefined, collation?: Collation): Plan[] | undefined {
  const clauses = filter.$or;
  if (!Array.isArray(clauses) || clauses.length === 0 || clauses.length > MAX_OR_BRANCHES) return undefined;
  // Keys of a unique index beside the $or already name the few documents it can match.
  if (single?.lookup) return undefined;
  const { $or: _, ...outer } = filter;
  const branches: Plan[] = [];
  for (const clause of clauses) {
    if (clause === null || typeof clause !== "object" || Array.isArray(clause)) return undefined;
    const plan = choosePlan(coll, { $and: [outer, clause] }, sort, undefined, false, collation);
    if (!plan || plan.selectivity <= (single?.selectivity ?? 0)) return undefined;
    branches.push(plan);
  }
  return branches;
}

/**
 * Runs an `$or` plan: each document once, every candidate re-checked by the whole filter. Unsorted, branch after
 * branch (mongod's OR stage); sorted, the first `wanted` matches of each branch that yields the order (any document
 * among the first `wanted` overall is among the first `wanted` of each branch it matches) merged with the sorted
 * matches of the others.
 */
function runOrPlan(
  coll: Collection,
  branches: Plan[],
  test: ((doc: Document) => boolean) | undefined,
  sort: SortSpec,
  wanted: number,
  strings: StringCompare | undefined,
  stats: ExecutionStats | undefined,
): Match[] {
  const seen = new Set<number>();
  const out: Match[] = [];
  for (const plan of branches) {
    const inOrder = sort.length === 0 || plan.sortDirection !== 0;
    let found = 0;
    scanPlan(coll, plan, stats, (rid, doc) => {
      if (stats) stats.docsExamined++;
      if (test && !test(doc)) return true;
      found++;
      if (!seen.has(rid)) {
        seen.add(rid);
        out.push([rid, doc]);
      }
      return sort.length === 0 ? out.length < wanted : !inOrder || found < wanted;
    });
    if (sort.length === 0 && out.length >= wanted) break;
  }
  return sort.length === 0 ? out : sortMatches(out, sort, strings);
}

/**
 * Runs a filter with optional sort/skip/limit and returns [recordId, document] pairs (the stored objects; callers
 * never mutate them, writes swap in new objects).
 */
export function findMatches(coll: Collection, filter: Document = {}, options: FindOptions = {}, stats?: ExecutionStats): Match[] {
  const sort = options.sort ?? [];
  const skip = Math.max(0, options.skip ?? 0);
  const limit = options.limit && options.limit > 0 ? options.limit : Infinity;
  const collation = options.collation;
  const hinted = options.hint !== undefined && options.hint !== null;
  const byId = hinted || stats || skip > 0 ? undefined : matchById(coll, filter, options);
  if (byId) return byId;
  const plan = choosePlan(coll, filter, sort, options.hint, limit !== Infinity, collation);
  const orPlan = hinted ? undefined : chooseOrPlan(coll, filter, sort, plan, collation);
  const test = plan && !orPlan && answeredByIndex(filter, plan) ? undefined : compileFilter(filter, options.variables, collation);
  if (orPlan) {
    if (stats) {
      stats.plan = "OR";
      stats.index = undefined;
      stats.branches = orPlan.map((p) => ({
        index: p.index,
        direction: p.sortDirection === -1 ? -1 : 1,
        sorted: sort.length > 0 && p.sortDirection !== 0,
      }));
    }
    const matches = runOrPlan(coll, orPlan, test, sort, skip + limit, collation?.compare, stats);
    return skip || limit !== Infinity ? matches.slice(skip, skip + (limit === Infinity ? matches.length : limit)) : matches;
  }
  const out: Match[] = [];
  // Early stop is possible whenever the output order is already the requested one.
  const ordered = sort.length === 0 || (plan !== undefined && plan.sortDirection !== 0);
  const wanted = ordered ? skip + limit : Infinity;
  const consider = (rid: number, doc: Document): boolean => {
    if (stats) stats.docsExamined++;
    if (!test || test(doc)) out.push([rid, doc]);
    return out.length < wanted;
  };
  if (stats) {
    stats.plan = plan ? `IXSCAN ${plan.index.name}` : "COLLSCAN";
    stats.index = plan?.index;
    stats.direction = plan?.sortDirection === -1 ? -1 : 1;
  }
  if (plan) scanPlan(coll, plan, stats, consider);
  else for (const [rid, doc] of coll.docs) if (!consider(rid, doc)) break;
  let result = out;
  if (!ordered) {
    result = sortMatches(out, sort, collation?.compare);
  }
  if (skip || limit !== Infinity) result = result.slice(skip, skip + (limit === Infinity ? result.length : limit));
  return result;
}

/**
 * A filter pinning `_id` to one scalar (a write's usual `{_id, status, ...}`), without a collation: its one candidate
 * is found by the _id index's hash and tested, as the plan on that index would do, without weighing every index.
 * Undefined when the hash cannot answer (a transaction's copy, a time-series collection) or the filter is otherwise.
 */
function matchById(coll: Collection, filter: Document, options: FindOptions): Match[] | undefined {
  const id = filter._id;
  if (options.collation || !isSimpleScalar(id)) return undefined;
  const owner = coll.idIndex.hashLookup([id]);
  if (owner === undefined) return undefined;
  const doc = owner === null ? undefined : coll.docs.get(owner);
  if (doc === undefined) return [];
  const test = Object.keys(filter).length === 1 ? undefined : compileFilter(filter, options.variables);
  return !test || test(doc) ? [[owner!, doc]] : [];
}

function sortMatches(matches: Match[], sort: SortSpec, strings?: StringCompare): Match[] {
  const docs = sortDocuments(
    matches.map((m) => m[1]),
    sort,
    strings,
  );
  // sortDocuments is stable and returns the same objects, so map them back to their record ids.
  const ridOf = new Map<Document, number>(matches.map(([rid, doc]) => [doc, rid]));
  return docs.map((doc) => [ridOf.get(doc)!, doc]);
}

export function findDocuments(coll: Collection | undefined, filter: Document = {}, options: FindOptions = {}): Document[] {
  if (!coll) return [];
  return findMatches(coll, filter, options).map((m) => m[1]);
}
