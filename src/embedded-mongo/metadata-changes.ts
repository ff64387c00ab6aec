// collMod changes a collection's options and index specs in place, outside the store's write path; this wrapper
// reports the outcome as one oplog entry (as mongod logs collMod), so durable mode journals it.
import type { Document } from "bson";
import type { CommandContext } from "./context.ts";

export function withCollModRecorded<H extends (cmd: Document, ctx: CommandContext) => Document>(commands: Map<string, H>): Map<string, H> {
  const collMod = commands.get("collMod");
  if (!collMod) return commands;
  commands.set("collMod", ((cmd, ctx) => {
    const reply = collMod(cmd, ctx);
    const store = ctx.server.store;
    const coll = typeof cmd.collMod === "string" ? store.get(ctx.db, cmd.collMod) : undefined;
    if (reply.ok === 1 && coll && store.listener) {
      store.listener.command(ctx.db, {
        cmd: "collMod",
        coll: coll.name,
        options: structuredClone(coll.options),
        indexes: coll.indexes.slice(1).map((index) => structuredClone(index.spec)),
      });
    }
    return reply;
  }) as H);
  return commands;
}
