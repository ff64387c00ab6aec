// collMod changes a collection's options and index specs in place, outside the store's write path; this wrapper
// reports the outcome as one oplog entry (as mongod logs collMod), so durable mode journals it.
import type { Document } from "bson";
import { cloneDocument } from "../bson/clone.ts";
import { GENERIC_COMMAND_FIELDS } from "./common.ts";
import type { CommandContext } from "./context.ts";

export function withCollModRecorded<H extends (cmd: Document, ctx: CommandContext) => Document>(commands: Map<string, H>): Map<string, H> {
  const collMod = commands.get("collMod");
  if (!collMod) return commands;
  commands.set("collMod", ((cmd, ctx) => {
    const store = ctx.server.store;
    const before = typeof cmd.collMod === "string" ? cloneDocument(store.get(ctx.db, cmd.collMod)?.options) : undefined;
    const reply = collMod(cmd, ctx);
    const coll = typeof cmd.collMod === "string" ? store.get(ctx.db, cmd.collMod) : undefined;
    if (reply.ok === 1 && coll && store.listener) {
      // What was asked (a modify event's operationDescription): the command without its generic fields.
      const change = Object.fromEntries(Object.entries(cmd).filter(([k]) => k !== "collMod" && !k.startsWith("$") && !GENERIC_COMMAND_FIELDS.has(k)));
      store.listener.command(ctx.db, {
        cmd: "collMod",
        coll: coll.name,
        options: cloneDocument(coll.options),
        indexes: coll.indexes.slice(1).map((index) => cloneDocument(index.spec)),
        uuid: coll.uuid,
        change: cloneDocument(change),
        before,
      });
    }
    return reply;
  }) as H);
  return commands;
}
