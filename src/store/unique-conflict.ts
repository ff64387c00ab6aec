// Writes refused by a unique index reach the services as a UniqueConflict naming the value that is taken
// (phone, tagname, url...), so the rules above the store map conflicts to error codes without knowing indexes.
import { isDuplicateKeyError } from "./database.ts";

export class UniqueConflict extends Error {
  constructor(readonly field: string) {
    super(`${field} is already taken`);
    this.name = "UniqueConflict";
  }
}

/**
 * The UniqueConflict a duplicate key error means, by the first of `fields` (document field -> name given to
 * the services) its index covers; any other error is answered as it is.
 */
export function asUniqueConflict(error: unknown, fields: Readonly<Record<string, string>>): unknown {
  if (!isDuplicateKeyError(error)) return error;
  const indexed = Object.keys((error as { keyPattern?: Record<string, unknown> }).keyPattern ?? {});
  const field = Object.keys(fields).find((name) => indexed.includes(name));
  return field === undefined ? error : new UniqueConflict(fields[field]!);
}
