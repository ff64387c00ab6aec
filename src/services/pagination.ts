// List parameters shared by every list method.
import { validationError } from "../domain/errors.ts";

export const DEFAULT_PAGE_SIZE = 10;
export const MAX_PAGE_SIZE = 100;

/** `limit` is 1 to 100, default 10. */
export function pageSize(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw validationError("limit", `limit must be an integer from 1 to ${MAX_PAGE_SIZE}.`);
  }
  return limit;
}
