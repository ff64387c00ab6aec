// Routes a command document to its handler and turns failures into mongod-shaped error replies.
import type { Document } from "bson";
import { collectionCommands } from "./collections.ts";
import { crudCommands } from "./crud.ts";
import { explainCommands } from "./explain.ts";
import { failPointCommands } from "./configure-fail-point.ts";
import { collectionModifyCommands } from "./collection-modify.ts";
import { serverStatusCommands } from "./server-status.ts";
import { handshakeCommands } from "./handshake.ts";
import { indexCommands } from "./indexes.ts";
import { queryCommands } from "./query.ts";
import { searchIndexCommands } from "./search-indexes.ts";
import type { CommandContext, CommandHandler } from "./context.ts";
import { CommandError, commandError, ErrorCodes } from "../bson/errors.ts";
import { failPointsOf } from "./fail-points.ts";
import { withChangeStreams } from "../replication/change-streams.ts";
import { checkSessionFields, withRetryableWrites } from "../replication/sessions.ts";
import { withCollModRecorded } from "./metadata-changes.ts";
import { withCollStats } from "./collection-stats.ts";
import { checkSnapshotSupport } from "./snapshot-reads.ts";
import { transactionCommands } from "./transactions.ts";
import { isTransactionStatement } from "../replication/transaction-rules.ts";

// Change streams, retryable writes (replica set) and collMod's oplog entry wrap the handlers they extend.
const COMMANDS = withCollModRecorded(
  withRetryableWrites<CommandContext, CommandHandler>(
    withChangeStreams<CommandContext, CommandHandler>(
      withCollStats(
        new Map<string, CommandHandler>(
          Object.entries({
            ...handshakeCommands,
            ...crudCommands,
            ...queryCommands,
            ...indexCommands,
            ...collectionCommands,
            ...explainCommands,
            ...failPointCommands,
            ...collectionModifyCommands,
            ...serverStatusCommands,
            ...searchIndexCommands,
            ...transactionCommands,
          }),
        ),
      ),
    ),
    (cmd, ctx) => failPointsOf(ctx.server).transactionalWriteStatement(cmd),
  ),
);

/** Runs one command; a fail point may instead fail it, delay its reply or close the connection (fail-points.ts). */
export function runCommand(cmd: Document, ctx: CommandContext): Document {
  return failPointsOf(ctx.server).run(cmd, ctx, () => executeCommand(cmd, ctx));
}

function executeCommand(cmd: Document, ctx: CommandContext): Document {
  try {
    const name = Object.keys(cmd)[0];
    if (name === undefined) throw commandError(ErrorCodes.FailedToParse, "Empty command object");
    checkSessionFields(cmd, name, ctx);
    // mongod's logical session cache learns of a session from any command carrying it.
    if (cmd.lsid !== undefined) ctx.server.sessions.local.touch(cmd.lsid);
    const handler = COMMANDS.get(name);
    if (!handler) throw commandError(ErrorCodes.CommandNotFound, `no such command: '${name}'`);
    // A transaction's statement (a standalone refused it above): the transaction decides what it reads and writes.
    if (isTransactionStatement(cmd)) return ctx.server.transactions.run(cmd, name, ctx, handler);
    checkSnapshotSupport(cmd, name);
    return handler(cmd, ctx);
  } catch (err) {
    if (err instanceof CommandError) return err.toReply();
    return { ok: 0, errmsg: (err as Error)?.message ?? String(err), code: 1, codeName: "InternalError" };
  }
}
