// Generic command options the embedded server must not silently ignore: a collation other than the simple one,
// and a read concern a standalone cannot honour. Each answers an error instead of a quietly different result.
import type { Document } from "bson";
import type { CommandContext } from "./context.ts";
import { commandError, ErrorCodes } from "./errors.ts";
import { formatValue } from "./format.ts";

/** Accepts no collation or the simple (binary) one; any other answers BadValue rather than comparing binary. */
export function checkCollation(collation: unknown): void {
  if (collation === undefined || collation === null) return;
  if (typeof collation !== "object" || Array.isArray(collation)) {
    throw commandError(ErrorCodes.TypeMismatch, "BSON field 'collation' is the wrong type, expected type 'object'");
  }
  const spec = collation as Document;
  if (spec.locale === "simple" && Object.keys(spec).length === 1) return;
  if (typeof spec.locale !== "string") throw commandError(ErrorCodes.FailedToParse, "BSON field 'locale' is missing but a required field");
  throw commandError(
    ErrorCodes.BadValue,
    `collation ${formatValue(spec)} is not supported by the embedded server: only {locale: "simple"} (binary comparison) is`,
  );
}

/**
 * readConcern `snapshot` and `linearizable` need a replica set (mongod: 123 NotAReplicaSet on a standalone). Which
 * commands may read at a snapshot is checked for every command (snapshot-reads.ts).
 */
export function checkReadConcern(cmd: Document, ctx: CommandContext): void {
  const level = (cmd.readConcern as Document | undefined)?.level;
  if (level !== "snapshot" && level !== "linearizable") return;
  if (!ctx.server.replSet) throw commandError(ErrorCodes.NotAReplicaSet, "node needs to be a replica set member to use read concern");
}

/** Both option checks, for commands that take a collation and a read concern. */
export function checkReadOptions(cmd: Document, ctx: CommandContext): void {
  checkCollation(cmd.collation);
  checkReadConcern(cmd, ctx);
}
