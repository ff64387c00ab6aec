// serverStatus: a small but truthful document (no storage engine internals, which this server does not have).
import type { Document } from "bson";
import type { CommandHandler } from "./context.ts";
import { SERVER_VERSION } from "./handshake.ts";

const started = Date.now();

export const serverStatusCommands: Record<string, CommandHandler> = {
  serverStatus: (_cmd, ctx) => {
    let collections = 0;
    let documents = 0;
    for (const coll of ctx.server.store.allCollections()) {
      collections++;
      documents += coll.docs.size;
    }
    const memory = process.memoryUsage();
    const reply: Document = {
      host: "embedded",
      version: SERVER_VERSION,
      process: "embedded-mongo",
      pid: process.pid,
      uptime: Math.floor((Date.now() - started) / 1000),
      uptimeMillis: Date.now() - started,
      localTime: new Date(),
      storageEngine: { name: "embedded-memory", supportsCommittedReads: false, persistent: false },
      mem: { bits: 64, resident: Math.round(memory.rss / 1048576), virtual: Math.round(memory.rss / 1048576), supported: true },
      metrics: { cursor: { open: { total: ctx.server.cursors.size } } },
      embedded: { databases: ctx.server.store.databases.size, collections, documents },
      ok: 1,
    };
    return reply;
  },
};
