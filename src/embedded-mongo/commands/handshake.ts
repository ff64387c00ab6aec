// Connection handshake and server-level commands: hello/isMaster, ping, buildInfo, sessions, listDatabases.
import { Binary, UUID, type Document } from "bson";
import type { CommandContext, CommandHandler } from "./context.ts";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import { SESSION_TIMEOUT_MINUTES } from "../replication/sessions.ts";

export const SERVER_VERSION = "7.0.0";
export const MAX_BSON_OBJECT_SIZE = 16 * 1024 * 1024;
export const MAX_WIRE_VERSION = 21;

/**
 * Standalone: no setName and no topologyVersion, so drivers poll instead of streaming hellos. On a replica set
 * the member adds its topology (setName, hosts, primary, topologyVersion, lastWrite...).
 */
function helloReply(ctx: CommandContext, legacy: boolean): Document {
  const primaryField = legacy ? "ismaster" : "isWritablePrimary";
  const common: Document = {
    maxBsonObjectSize: MAX_BSON_OBJECT_SIZE,
    maxMessageSizeBytes: 48_000_000,
    maxWriteBatchSize: 100_000,
    localTime: new Date(),
    logicalSessionTimeoutMinutes: SESSION_TIMEOUT_MINUTES,
    connectionId: ctx.connectionId,
    minWireVersion: 0,
    maxWireVersion: MAX_WIRE_VERSION,
    readOnly: false,
    ok: 1,
  };
  const replSet = ctx.server.replSet;
  if (replSet) return { helloOk: true, ...replSet.hello(primaryField, common) };
  return { helloOk: true, [primaryField]: true, ...common };
}

function sessionIds(cmd: Document, field: string): Document[] {
  const list = cmd[field];
  if (!Array.isArray(list)) throw commandError(ErrorCodes.TypeMismatch, `BSON field '${field}' is the wrong type, expected type 'array'`);
  for (const entry of list) {
    if (!(entry && typeof entry === "object" && (entry as Document).id instanceof Binary)) {
      throw commandError(ErrorCodes.TypeMismatch, `BSON field '${field}.id' is missing or is the wrong type, expected type 'binData'`);
    }
  }
  return list as Document[];
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
  // The session cache ($listLocalSessions) learns of sessions here and from any command's lsid.
  startSession: (_cmd, ctx) => {
    const id = { id: new UUID() };
    ctx.server.sessions.local.touch(id);
    return { id, timeoutMinutes: SESSION_TIMEOUT_MINUTES, ok: 1 };
  },
  refreshSessions: (cmd, ctx) => {
    for (const lsid of sessionIds(cmd, "refreshSessions")) ctx.server.sessions.local.touch(lsid);
    return { ok: 1 };
  },
  // mongod drops ended sessions from its cache at its next refresh (within 5 minutes); here at once.
  endSessions: (cmd, ctx) => {
    const lsids = sessionIds(cmd, "endSessions");
    for (const lsid of lsids) ctx.server.sessions.local.end(lsid);
    ctx.server.transactions.abortSessions(lsids, "its session was ended");
    return { ok: 1 };
  },
  // What test runners send between tests: every (or each listed) session's open transaction is aborted.
  killSessions: (cmd, ctx) => {
    ctx.server.transactions.abortSessions(sessionIds(cmd, "killSessions"), "its session was killed");
    return { ok: 1 };
  },
  killAllSessions: (cmd, ctx) => {
    if (!Array.isArray(cmd.killAllSessions))
      throw commandError(ErrorCodes.TypeMismatch, "BSON field 'killAllSessions' is the wrong type, expected type 'array'");
    ctx.server.transactions.abortSessions(undefined, "its session was killed");
    return { ok: 1 };
  },
  listDatabases: (cmd, ctx) => {
    const databases = [...ctx.server.store.databases.entries()]
      .filter(([, colls]) => colls.size > 0)
      .map(([name]) => ({ name, sizeOnDisk: 0, empty: false }));
    if (cmd.nameOnly) return { databases: databases.map(({ name }) => ({ name })), ok: 1 };
    return { databases, totalSize: 0, totalSizeMb: 0, ok: 1 };
  },
};
