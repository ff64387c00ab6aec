// Query pieces shared by the repositories: newest-first pages and inserts that skip what already exists.
import type { Collection, Document, Filter, WithId } from "mongodb";
import { bulkWriteErrors } from "./database.ts";

/** A page of a newest-first list, and whether more follow it. */
export interface Page<T> {
  items: T[];
  hasMore: boolean;
}

/**
 * The page of `filter`'s documents newest first (created_at, then _id), after `after` when given: one more
 * than `limit` is read to tell whether more follow.
 */
export async function newestFirstPage<T extends Document & { created_at: Date; _id: string }>(
  collection: Collection<T>,
  filter: Filter<T>,
  options: { limit: number; after: { created_at: Date; _id: string } | null },
): Promise<Page<WithId<T>>> {
  const query = options.after ? { ...filter, ...startingAfterFilter(options.after) } : filter;
  const found = await collection.find(query as Filter<T>).sort({ created_at: -1, _id: -1 }).limit(options.limit + 1).toArray();
  return { items: found.slice(0, options.limit), hasMore: found.length > options.limit };
}

/** The documents after `after` in newest-first order (created_at, then _id, both descending). */
function startingAfterFilter(after: { created_at: Date; _id: string }) {
  return {
    $or: [
      { created_at: { $lt: after.created_at } },
      { created_at: after.created_at, _id: { $lt: after._id } },
    ],
  };
}

/**
 * The indexes of the documents an unordered insertMany skipped as duplicates, or null when it failed for any
 * other reason (then the error must be rethrown).
 */
export function duplicateIndexes(error: unknown): Set<number> | null {
  const list = bulkWriteErrors(error);
  if (!list || list.length === 0 || list.some((e) => e.code !== 11000)) return null;
  return new Set(list.map((e) => e.index));
}
