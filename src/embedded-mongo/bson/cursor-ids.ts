// Cursor ids in getMore and killCursors, checked as mongod's command parser checks them: an int64 only, named by the
// field's path in the message, before any cursor is looked up or killed.
import { type Document, Long } from "bson";
import { bsonTypeName } from "./bson-type-names.ts";
import { commandError, ErrorCodes } from "./errors.ts";

/** Whether `value` has a cursor id's type, an int64 (whatever its value). */
export function isCursorId(value: unknown): value is Long | bigint {
  return bsonTypeName(value) === "long";
}

/** A cursor id: an int or a double is refused whatever its value (14, naming the field as `command.field`). */
export function cursorIdOf(value: unknown, field: string): Long {
  if (!isCursorId(value)) {
    throw commandError(ErrorCodes.TypeMismatch, `BSON field '${field}' is the wrong type '${bsonTypeName(value)}', expected type 'long'`);
  }
  return typeof value === "bigint" ? Long.fromBigInt(value) : value;
}

/** getMore's cursor id and collection, checked as mongod parses the command: id first, then the collection. */
export function getMoreTarget(cmd: Document): { id: Long; collection: string } {
  const id = cursorIdOf(cmd.getMore, "getMore.getMore");
  const collection = cmd.collection;
  if (collection === undefined || collection === null) {
    throw commandError(ErrorCodes.Location40414, "BSON field 'getMore.collection' is missing but a required field");
  }
  if (typeof collection !== "string") {
    throw commandError(
      ErrorCodes.TypeMismatch,
      `BSON field 'getMore.collection' is the wrong type '${bsonTypeName(collection)}', expected type 'string'`,
    );
  }
  return { id, collection };
}

/**
 * killCursors' `cursors`: a required array of int64 ids, each checked before any cursor is killed (a null element
 * is skipped, as mongod skips it).
 */
export function cursorsToKill(cmd: Document): Long[] {
  const cursors = cmd.cursors;
  if (cursors === undefined || cursors === null) {
    throw commandError(ErrorCodes.Location40414, "BSON field 'killCursors.cursors' is missing but a required field");
  }
  if (!Array.isArray(cursors)) {
    throw commandError(
      ErrorCodes.TypeMismatch,
      `BSON field 'killCursors.cursors' is the wrong type '${bsonTypeName(cursors)}', expected type 'array'`,
    );
  }
  const ids: Long[] = [];
  cursors.forEach((value, i) => {
    if (value !== null) ids.push(cursorIdOf(value, `killCursors.cursors.${i}`));
  });
  return ids;
}
