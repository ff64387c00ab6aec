// List parameters shared by every list method: the page size and the cursor a page starts after.
import { svcError, validationError } from "../domain/errors.ts";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../domain/limits.ts";

/** `limit` is 1 to 100, default 10. */
export function pageSize(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw validationError("limit", `limit must be an integer from 1 to ${MAX_PAGE_SIZE}.`);
  }
  return limit;
}

/** The record `starting_after` names, looked up in the list's own scope: unknown is 400 `invalid_cursor`. */
export async function cursorRecord<T>(startingAfter: string | undefined, find: (id: string) => Promise<T | null>): Promise<T | null> {
  if (startingAfter === undefined) return null;
  const record = await find(startingAfter);
  if (!record) throw svcError("invalid_cursor");
  return record;
}

/** A newest-first list held in memory (a user's wallets), paged like the stored lists. */
export function pageInMemory<T extends { id: string }>(items: readonly T[], startingAfter: string | undefined, limit: number): { items: T[]; hasMore: boolean } {
  let start = 0;
  if (startingAfter !== undefined) {
    const index = items.findIndex((item) => item.id === startingAfter);
    if (index === -1) throw svcError("invalid_cursor");
    start = index + 1;
  }
  return { items: items.slice(start, start + limit), hasMore: items.length > start + limit };
}
