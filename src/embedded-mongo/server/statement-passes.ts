// A long insert, update or delete runs its statements a slice at a time, and other commands run between the
// slices: mongod yields its locks between the batches of a write (64 documents for an insert), so a large batch
// of inserts does not hold up the reads of other clients. Each statement is still atomic; the command's reply,
// its oplog entries and its retry record are those of the same command run in one piece.
import type { Document } from "bson";
import type { CommandContext } from "../commands/context.ts";
import { runCommand } from "../commands/dispatch.ts";
import { failPointsOf } from "../commands/fail-points.ts";
import type { StatementPass } from "../replication/sessions.ts";

/** Statements run before other commands get their turn: mongod's internalInsertMaxBatchSize. */
export const STATEMENTS_PER_PASS = 64;

const STATEMENT_FIELDS: Record<string, string> = { insert: "documents", update: "updates", delete: "deletes" };

/** Whether a command runs in passes: a write of more statements than one pass runs, outside a transaction. */
export function runsInPasses(command: Document, ctx: CommandContext): boolean {
  const name = Object.keys(command)[0] ?? "";
  const field = STATEMENT_FIELDS[name];
  if (field === undefined) return false;
  const list = command[field];
  if (!Array.isArray(list) || list.length <= STATEMENTS_PER_PASS) return false;
  // A transaction's writes are seen by nobody before its commit; a fail point fires once per command.
  if (command.autocommit !== undefined || command.startTransaction !== undefined) return false;
  return !failPointsOf(ctx.server).armedForWrites;
}

/**
 * Runs the command pass after pass, each in its own turn of the event loop, until one answers its whole reply
 * (or an error). Null when the connection closed meanwhile: the statements that ran stay applied (and, for a
 * retryable write, remembered for its retry), as when a client goes away from mongod between two batches.
 */
export async function runInPasses(command: Document, ctx: CommandContext): Promise<{ reply: Document | null; wrote: boolean }> {
  const oplog = ctx.server.oplog;
  const before = oplog.lastSeq;
  const pass: StatementPass = { budget: STATEMENTS_PER_PASS, paused: false, next: 0 };
  for (;;) {
    const reply = runCommand(command, { ...ctx, pass });
    if (!pass.paused || reply.ok !== 1) return { reply, wrote: oplog.lastSeq !== before };
    pass.paused = false;
    pass.budget = STATEMENTS_PER_PASS;
    await new Promise((resolve) => setImmediate(resolve));
    if (ctx.signal?.aborted) return { reply: null, wrote: oplog.lastSeq !== before };
  }
}
