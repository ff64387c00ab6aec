// Query pieces shared by the repositories: newest-first pages and inserts that skip what already exists.
import { bulkWriteErrors } from "./database.ts";

/** The documents after `after` in newest-first order (created_at, then _id, both descending). */
export function startingAfterFilter(after: { created_at: Date; _id: string }) {
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
