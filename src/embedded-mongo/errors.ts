// Command errors carrying mongod's numeric codes and code names, so drivers classify them exactly as with mongod.
import type { Document } from "bson";

export const ErrorCodes = {
  BadValue: 2,
  NoSuchKey: 4,
  Unauthorized: 13,
  FailedToParse: 9,
  TypeMismatch: 14,
  IllegalOperation: 20,
  NamespaceNotFound: 26,
  ConflictingUpdateOperators: 40,
  IndexNotFound: 27,
  CursorNotFound: 43,
  NamespaceExists: 48,
  DollarPrefixedFieldName: 52,
  CommandNotFound: 59,
  ImmutableField: 66,
  InvalidOptions: 72,
  InvalidNamespace: 73,
  IndexOptionsConflict: 85,
  IndexKeySpecsConflict: 86,
  CannotIndexParallelArrays: 171,
  Location40573: 40573,
  DuplicateKey: 11000,
} as const;

const CODE_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(ErrorCodes).map(([name, code]) => [code, name]),
);

export class CommandError extends Error {
  readonly code: number;
  readonly codeName: string;
  /** Extra top-level reply fields (keyPattern/keyValue for duplicate keys). */
  readonly extra: Document;

  constructor(code: number, message: string, extra: Document = {}) {
    super(message);
    this.code = code;
    this.codeName = CODE_NAMES[code] ?? "";
    this.extra = extra;
  }

  toReply(): Document {
    const reply: Document = { ok: 0, errmsg: this.message, code: this.code };
    if (this.codeName) reply.codeName = this.codeName;
    return Object.assign(reply, this.extra);
  }

  /** Shape used inside `writeErrors` arrays of insert/update/delete. */
  toWriteError(index: number): Document {
    return { index, code: this.code, errmsg: this.message, ...this.extra };
  }
}

export function commandError(code: number, message: string, extra?: Document): CommandError {
  return new CommandError(code, message, extra);
}
