// What mongod checks on a command that carries transaction fields (autocommit, startTransaction) before it runs
// it: the fields' combination, the commands a transaction may run, and the read and write concerns a
// statement may carry. Each refusal answers mongod's code and message.
import type { Document } from "bson";
import { commandError, ErrorCodes } from "../bson/errors.ts";

/** The commands a multi-document transaction may run (mongod 7's list, less the sharding-internal ones). */
const TRANSACTION_COMMANDS = new Set([
  "abortTransaction",
  "aggregate",
  "commitTransaction",
  "create",
  "createIndexes",
  "delete",
  "distinct",
  "find",
  "findandmodify",
  "findAndModify",
  "getMore",
  "insert",
  "killCursors",
  "update",
]);

/** The commands of a transaction that only read (its `$out`/`$merge` stages are refused). */
const READ_COMMANDS = new Set(["aggregate", "distinct", "find", "getMore", "killCursors"]);

export function readsOnly(name: string): boolean {
  return READ_COMMANDS.has(name);
}

const TRANSACTION_READ_CONCERNS = new Set(["local", "majority", "snapshot"]);

/** Whether the command is a statement of a multi-document transaction (it carries `autocommit`). */
export function isTransactionStatement(cmd: Document): boolean {
  return cmd.autocommit !== undefined || cmd.startTransaction !== undefined;
}

/** The session fields of a transaction statement, checked as mongod's validateSessionOptions does. */
export function checkTransactionFields(cmd: Document, name: string): void {
  if (cmd.autocommit === undefined) {
    throw commandError(ErrorCodes.InvalidOptions, "'startTransaction' field requires 'autocommit' field to also be specified");
  }
  if (cmd.autocommit !== false) throw commandError(ErrorCodes.InvalidOptions, "Specifying autocommit=true is not allowed.");
  if (cmd.startTransaction !== undefined && cmd.startTransaction !== true) {
    throw commandError(ErrorCodes.InvalidOptions, "Specifying startTransaction=false is not allowed.");
  }
  if (cmd.txnNumber === undefined) {
    throw commandError(ErrorCodes.InvalidOptions, "'autocommit' field requires a transaction number to also be specified");
  }
  if (cmd.lsid === undefined) throw commandError(ErrorCodes.InvalidOptions, "Transaction number requires a session ID to also be specified");
  if (!TRANSACTION_COMMANDS.has(name)) {
    throw commandError(ErrorCodes.OperationNotSupportedInTransaction, `Cannot run '${name}' in a multi-document transaction.`);
  }
  if (name === "aggregate" && Array.isArray(cmd.pipeline)) {
    for (const stage of cmd.pipeline as Document[]) {
      const op = Object.keys(stage ?? {})[0];
      if (op === "$out" || op === "$merge" || op === "$changeStream" || op === "$collStats" || op === "$indexStats" || op === "$currentOp") {
        throw commandError(ErrorCodes.OperationNotSupportedInTransaction, `${op} cannot be used in a transaction`);
      }
    }
  }
  const commitOrAbort = name === "commitTransaction" || name === "abortTransaction";
  if (cmd.writeConcern !== undefined && !commitOrAbort) {
    throw commandError(ErrorCodes.InvalidOptions, "Cannot set write concern after starting a transaction.");
  }
}

/**
 * The read concern of a transaction statement: only the first may give one, at a level a transaction can read at
 * (mongod: local, majority or snapshot).
 */
export function checkTransactionReadConcern(cmd: Document, first: boolean): void {
  const readConcern = cmd.readConcern as Document | undefined;
  if (readConcern === undefined) return;
  if (!first) throw commandError(ErrorCodes.InvalidOptions, "Only the first command in a transaction may specify a readConcern");
  const level = readConcern.level;
  if (level !== undefined && !TRANSACTION_READ_CONCERNS.has(String(level))) {
    throw commandError(
      ErrorCodes.InvalidOptions,
      "The readConcern level must be either 'local' (default), 'majority' or 'snapshot' in order to run in a transaction",
    );
  }
}
