// Query pieces shared by the repositories: newest-first pages.
import type { Collection, Document, Filter, WithId } from "mongodb";

/** A page of a newest-first list, and whether more follow it (after `ending_before`: precede it). */
export interface Page<T> {
  items: T[];
  hasMore: boolean;
}

/** Bounds on `created_at`, each optional, all applied together (`created[gt]`, ... of a list request). */
export interface CreatedRange {
  gt?: Date;
  gte?: Date;
  lt?: Date;
  lte?: Date;
}

/** Where a page is in its list: its size, at most one cursor (the record itself), and the created bounds. */
export interface ListWindow<T> {
  limit: number;
  /** The page holds the items older than this one (`starting_after`). */
  after: T | null;
  /** The page holds the items just newer than this one (`ending_before`), still answered newest first. */
  before?: T | null;
  created?: CreatedRange;
}

type Position = { created_at: Date; _id: string };

/**
 * The page of `filter`'s documents newest first (created_at, then _id) within the window. One more than `limit`
 * is read to tell whether more follow; before a cursor (`ending_before`) the documents just newer than it are
 * read oldest first, so the page touches the cursor, and answered newest first.
 */
export async function newestFirstPage<T extends Document & Position>(
  collection: Collection<T>,
  filter: Filter<T>,
  window: ListWindow<Position>,
  /** The index that answers it, where two could and the better one needs saying (a planner's trial would find it). */
  hint?: string,
): Promise<Page<WithId<T>>> {
  const clauses: Document[] = [filter];
  const created = createdFilter(window.created ?? {});
  if (created) clauses.push({ created_at: created });
  if (window.after) clauses.push(olderThan(window.after));
  if (window.before) clauses.push(newerThan(window.before));
  const query = (clauses.length === 1 ? filter : { $and: clauses }) as Filter<T>;
  const direction = window.before ? 1 : -1;
  const found = await collection
    .find(query, hint === undefined ? {} : { hint })
    .sort({ created_at: direction, _id: direction })
    .limit(window.limit + 1)
    .toArray();
  const items = found.slice(0, window.limit);
  return { items: window.before ? items.reverse() : items, hasMore: found.length > window.limit };
}

/** The MongoDB condition on `created_at` of a range; null when it has no bound. */
function createdFilter(range: CreatedRange): Document | null {
  const condition: Document = {};
  for (const bound of ["gt", "gte", "lt", "lte"] as const) {
    const value = range[bound];
    if (value !== undefined) condition[`$${bound}`] = value;
  }
  return Object.keys(condition).length > 0 ? condition : null;
}

/** The documents after `cursor` in newest-first order (created_at, then _id, both descending). */
function olderThan(cursor: Position): Document {
  return { $or: [{ created_at: { $lt: cursor.created_at } }, { created_at: cursor.created_at, _id: { $lt: cursor._id } }] };
}

/** The documents before `cursor` in newest-first order. */
function newerThan(cursor: Position): Document {
  return { $or: [{ created_at: { $gt: cursor.created_at } }, { created_at: cursor.created_at, _id: { $gt: cursor._id } }] };
}
