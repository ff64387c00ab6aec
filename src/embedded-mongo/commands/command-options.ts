// Generic command options the embedded server must not silently ignore: a collation (checked here, honoured
// through collation.ts), and a read concern a standalone cannot honour. Each answers an error instead of a quietly
// different result.
import type { Document } from "bson";
import type { CommandContext } from "./context.ts";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import { parseCollation } from "../query/collation.ts";

/** Checks a collation document as mongod does (the command then runs under it, see collation.ts). */
export function checkCollation(collation: unknown): void {
  parseCollation(collation);
}

/**
 * readConcern `snapshot` and `linearizable` need a replica set (mongod: 123 NotAReplicaSet on a standalone). Which
 * commands may read at a snapshot is checked for every command (snapshot-reads.ts).
 */
export function checkReadConcern(cmd: Document, ctx: CommandContext): void {
  const level = (cmd.readConcern as Document | undefined)?.level;
  // mongod refuses a writing stage under a linearizable read concern.
  const last =
    Object.keys(cmd)[0] === "aggregate" && Array.isArray(cmd.pipeline)
      ? Object.keys((cmd.pipeline.at(-1) as Document | undefined) ?? {})[0]
      : undefined;
  if (level === "linearizable" && (last === "$out" || last === "$merge"))
    throw commandError(ErrorCodes.InvalidOptions, `${last} cannot be used with a 'linearizable' read concern level`);
  if (level !== "snapshot" && level !== "linearizable") return;
  if (!ctx.server.replSet) throw commandError(ErrorCodes.NotAReplicaSet, "node needs to be a replica set member to use read concern");
}

/** Both option checks, for commands that take a collation and a read concern. */
export function checkReadOptions(cmd: Document, ctx: CommandContext): void {
  checkCollation(cmd.collation);
  checkReadConcern(cmd, ctx);
}
