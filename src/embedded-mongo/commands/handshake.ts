// Connection handshake and server-level commands: hello/isMaster, ping, buildInfo, endSessions, listDatabases.
import type { Document } from "bson";
import type { CommandContext, CommandHandler } from "../context.ts";

export const SERVER_VERSION = "7.0.0";
export const MAX_BSON_OBJECT_SIZE = 16 * 1024 * 1024;
export const MAX_WIRE_VERSION = 21;

/** Standalone topology: no setName and no topologyVersion, so drivers poll instead of streaming hellos. */
function helloReply(ctx: CommandContext, legacy: boolean): Document {
  const reply: Document = {
    helloOk: true,
    [legacy ? "ismaster" : "isWritablePrimary"]: true,
    maxBsonObjectSize: MAX_BSON_OBJECT_SIZE,
    maxMessageSizeBytes: 48_000_000,
    maxWriteBatchSize: 100_000,
    localTime: new Date(),
    logicalSessionTimeoutMinutes: 30,
    connectionId: ctx.connectionId,
    minWireVersion: 0,
    maxWireVersion: MAX_WIRE_VERSION,
    readOnly: false,
    ok: 1,
  };
  return reply;
}

export const handshakeCommands: Record<string, CommandHandler> = {
  hello: (_cmd, ctx) => helloReply(ctx, false),
  isMaster: (_cmd, ctx) => helloReply(ctx, true),
  ismaster: (_cmd, ctx) => helloReply(ctx, true),
  ping: () => ({ ok: 1 }),
  buildInfo: () => ({
    version: SERVER_VERSION,
    gitVersion: "embedded",
    versionArray: [7, 0, 0, 0],
    bits: 64,
    debug: false,
    maxBsonObjectSize: MAX_BSON_OBJECT_SIZE,
    storageEngines: ["embedded-memory"],
    javascriptEngine: "none",
    ok: 1,
  }),
  endSessions: () => ({ ok: 1 }),
  listDatabases: (cmd, ctx) => {
    const databases = [...ctx.server.store.databases.entries()]
      .filter(([, colls]) => colls.size > 0)
      .map(([name]) => ({ name, sizeOnDisk: 0, empty: false }));
    if (cmd.nameOnly) return { databases: databases.map(({ name }) => ({ name })), ok: 1 };
    return { databases, totalSize: 0, totalSizeMb: 0, ok: 1 };
  },
};
