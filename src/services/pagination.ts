// List parameters shared by every list method (docs/contract.md, Lists): the page size, at most one cursor
// (`starting_after` or `ending_before`) and the bounds on creation time. Validation (422) comes first, in this
// order, then the cursor's lookup (400 invalid_cursor), as the check order puts them.
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { svcError, validationError } from "../domain/errors.ts";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../domain/limits.ts";
import type { CreatedRange, ListWindow } from "../store/list-queries.ts";

/** The list fields every list request message has. */
export interface ListRequest {
  limit?: number | undefined;
  startingAfter?: string | undefined;
  endingBefore?: string | undefined;
  created?: { gt?: Timestamp | undefined; gte?: Timestamp | undefined; lt?: Timestamp | undefined; lte?: Timestamp | undefined } | undefined;
}

/** A list request's parameters once valid: the cursor not yet looked up. */
export interface ListParameters {
  limit: number;
  cursor: { id: string; direction: "after" | "before" } | null;
  created: CreatedRange;
}

/** `limit` is 1 to 100, default 10. */
function pageSize(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw validationError("limit", `limit must be an integer from 1 to ${MAX_PAGE_SIZE}.`);
  }
  return limit;
}

/** Checks `limit`, the two cursors (one at most: 422 naming `ending_before`) and the created bounds. */
export function listParameters(request: ListRequest): ListParameters {
  const limit = pageSize(request.limit);
  if (request.startingAfter !== undefined && request.endingBefore !== undefined) {
    throw validationError("ending_before", "starting_after and ending_before cannot be used together.");
  }
  const cursor =
    request.startingAfter !== undefined
      ? { id: request.startingAfter, direction: "after" as const }
      : request.endingBefore !== undefined
        ? { id: request.endingBefore, direction: "before" as const }
        : null;
  const created: CreatedRange = {};
  for (const bound of ["gt", "gte", "lt", "lte"] as const) {
    const value = request.created?.[bound];
    if (value !== undefined) created[bound] = timestampDate(value);
  }
  return { limit, cursor, created };
}

/** The record a cursor names, looked up in the list's own scope: unknown is 400 `invalid_cursor`. */
async function cursorRecord<T>(id: string | undefined, find: (id: string) => Promise<T | null>): Promise<T | null> {
  if (id === undefined) return null;
  const record = await find(id);
  if (!record) throw svcError("invalid_cursor");
  return record;
}

/** The window a repository pages through: the parameters with the cursor's record looked up. */
export async function listWindow<T>(parameters: ListParameters, find: (id: string) => Promise<T | null>): Promise<ListWindow<T>> {
  const record = await cursorRecord(parameters.cursor?.id, find);
  return {
    limit: parameters.limit,
    after: parameters.cursor?.direction === "after" ? record : null,
    before: parameters.cursor?.direction === "before" ? record : null,
    created: parameters.created,
  };
}

/** Whether `date` is within the created bounds. */
function isWithin(range: CreatedRange, date: Date): boolean {
  const t = date.getTime();
  return (
    (range.gt === undefined || t > range.gt.getTime()) &&
    (range.gte === undefined || t >= range.gte.getTime()) &&
    (range.lt === undefined || t < range.lt.getTime()) &&
    (range.lte === undefined || t <= range.lte.getTime())
  );
}

/** A newest-first list held in memory (a user's wallets), paged like the stored lists. */
export function pageInMemory<T extends { id: string }>(
  items: readonly T[],
  parameters: ListParameters,
  createdOf: (item: T) => Date,
): { items: T[]; hasMore: boolean } {
  let start = 0;
  let end = items.length;
  if (parameters.cursor) {
    const index = items.findIndex((item) => item.id === parameters.cursor!.id);
    if (index === -1) throw svcError("invalid_cursor");
    if (parameters.cursor.direction === "after") start = index + 1;
    else end = index;
  }
  const candidates = items.slice(start, end).filter((item) => isWithin(parameters.created, createdOf(item)));
  if (parameters.cursor?.direction === "before") {
    // The items just newer than the cursor: the end of the newest-first candidates.
    const from = Math.max(0, candidates.length - parameters.limit);
    return { items: candidates.slice(from), hasMore: from > 0 };
  }
  return { items: candidates.slice(0, parameters.limit), hasMore: candidates.length > parameters.limit };
}
