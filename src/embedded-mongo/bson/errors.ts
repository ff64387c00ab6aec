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
  Location40414: 40414,
  DuplicateKey: 11000,
  InvalidPipelineOperator: 168,
  FailPointSetFailed: 157,
  CommandNotSupported: 115,
  OptionNotSupportedOnView: 167,
  CommandNotSupportedOnView: 166,
  NotImplemented: 238,
  InvalidIndexSpecificationOption: 197,
  QueryFeatureNotAllowed: 224,
  NotAReplicaSet: 123,
  Location40324: 40324,
  ViewDepthLimitExceeded: 149,
  SnapshotUnavailable: 246,
  SnapshotTooOld: 239,
  Location17276: 17276,
  WriteConflict: 112,
  TransactionTooOld: 225,
  NoSuchTransaction: 251,
  TransactionCommitted: 256,
  OperationNotSupportedInTransaction: 263,
} as const;

// Names of further codes mongod answers (from its error_codes table) that reach clients through fail points or
// through errors raised here; the driver and the unified tests match on codeName too.
const OTHER_CODE_NAMES: Record<number, string> = {
  1: "InternalError",
  6: "HostUnreachable",
  7: "HostNotFound",
  8: "UnknownError",
  11: "UserNotFound",
  16: "InvalidLength",
  18: "AuthenticationFailed",
  24: "LockTimeout",
  43: "CursorNotFound",
  50: "MaxTimeMSExpired",
  63: "OBSOLETE_StaleShardVersion",
  64: "WriteConcernFailed",
  67: "CannotCreateIndex",
  79: "UnknownReplWriteConcern",
  89: "NetworkTimeout",
  91: "ShutdownInProgress",
  96: "OperationFailed",
  100: "UnsatisfiableWriteConcern",
  112: "WriteConflict",
  121: "DocumentValidationFailure",
  125: "CommandFailed",
  133: "FailedToSatisfyReadPreference",
  136: "CappedPositionLost",
  150: "StaleEpoch",
  189: "PrimarySteppedDown",
  202: "NetworkInterfaceExceededTimeLimit",
  211: "KeyNotFound",
  216: "ElectionInProgress",
  234: "RetryChangeStream",
  237: "CursorKilled",
  251: "NoSuchTransaction",
  256: "TransactionCommitted",
  262: "ExceededTimeLimit",
  263: "OperationNotSupportedInTransaction",
  276: "IncompleteTransactionHistory",
  280: "ChangeStreamFatalError",
  286: "ChangeStreamHistoryLost",
  290: "TransactionExceededLifetimeLimitSeconds",
  359: "InvalidSessionsOrNoSuchSession",
  9001: "SocketException",
  10107: "NotWritablePrimary",
  11600: "InterruptedAtShutdown",
  11601: "Interrupted",
  11602: "InterruptedDueToReplStateChange",
  13388: "StaleConfig",
  13435: "NotPrimaryNoSecondaryOk",
  13436: "NotPrimaryOrSecondary",
};

const CODE_NAMES: Record<number, string> = {
  ...OTHER_CODE_NAMES,
  ...Object.fromEntries(Object.entries(ErrorCodes).map(([name, code]) => [code, name])),
};

/** mongod's name for an error code; codes without a name are called Location<code>, as mongod does. */
export function codeName(code: number): string {
  return CODE_NAMES[code] ?? `Location${code}`;
}

/** The codes mongod labels RetryableWriteError when they fail a retryable write (RetriableError category + shutdown). */
const RETRYABLE_WRITE_CODES = new Set([6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436]);

/** Codes after which a whole transaction may be retried (mongod's isTransientTransactionError): write conflicts,
 * lock timeouts, a prepared transaction in the way, snapshot errors. */
const TRANSIENT_TRANSACTION_CODES = new Set([112, 24, 267, 239, 246]);

/**
 * Error labels mongod attaches by itself: RetryableWriteError for a retryable code answered to a retryable write
 * (a command with txnNumber outside a transaction) or to commitTransaction/abortTransaction; TransientTransactionError
 * for an error of a transaction's statement that leaves nothing behind (a commit's NoSuchTransaction only without a
 * write concern error, other statements' retryable codes too).
 */
export function serverErrorLabels(cmd: Document, code: number | undefined, writeConcernCode?: number): string[] {
  const name = Object.keys(cmd)[0];
  const retryableWrite = cmd.txnNumber !== undefined && cmd.autocommit === undefined;
  const commitOrAbort = name === "commitTransaction" || name === "abortTransaction";
  const retryable = (c: number | undefined) => c !== undefined && RETRYABLE_WRITE_CODES.has(c);
  const labels: string[] = [];
  if ((retryableWrite || commitOrAbort) && (retryable(code) || retryable(writeConcernCode))) labels.push("RetryableWriteError");
  if (cmd.autocommit !== undefined && code !== undefined) {
    const transient = commitOrAbort ? code === 251 && writeConcernCode === undefined : code === 251 || retryable(code);
    if (transient || TRANSIENT_TRANSACTION_CODES.has(code)) labels.push("TransientTransactionError");
  }
  return labels;
}

export class CommandError extends Error {
  readonly code: number;
  readonly codeName: string;
  /** Extra top-level reply fields (keyPattern/keyValue for duplicate keys). */
  readonly extra: Document;

  constructor(code: number, message: string, extra: Document = {}) {
    super(message);
    this.code = code;
    this.codeName = codeName(code);
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
