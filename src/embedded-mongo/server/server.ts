// The embedded server: options, state and lifecycle (listener, timers, durable storage). Connections are
// served by connection.ts.
import net from "node:net";
import { ChangeStreamCursors } from "../replication/change-streams.ts";
import { serveConnection } from "./connection.ts";
import type { ServerState } from "../commands/context.ts";
import { CursorRegistry } from "../commands/cursors.ts";
import { Oplog } from "../replication/oplog.ts";
import { DurableStorage } from "../durable/persistence.ts";
import { ReplicaSetMember } from "../replication/replica-set.ts";
import { Sessions } from "../replication/sessions.ts";
import { Transactions } from "../replication/transactions.ts";
import { Store } from "../storage/store.ts";
import { sweepExpired } from "../storage/ttl-sweeper.ts";

export interface EmbeddedMongoOptions {
  /** TCP port; 0 or omitted picks a free ephemeral port. */
  port?: number;
  /** Listen address; defaults to 127.0.0.1. */
  host?: string;
  /** How often expired TTL documents are deleted; mongod's default is 60 s. */
  ttlSweepIntervalMs?: number;
  /** Idle time after which an open cursor is discarded; mongod's default is 10 minutes. */
  cursorTimeoutMs?: number;
  /**
   * Run the server in a worker thread of this process: its CPU work then runs on another core than the
   * application's event loop (useful for benchmarks); the data lives in that thread.
   */
  inWorkerThread?: boolean;
  /**
   * The server and its connections do not keep the process alive (a test run's shared server): the process
   * ends once its own clients are closed, even if nobody stops the server. Not with `inWorkerThread`.
   */
  unref?: boolean;
  /**
   * Run as the primary of a one-member replica set of this name (mongod --replSet): hello reports the set,
   * replies carry $clusterTime, and change streams and retryable writes are available.
   */
  replSet?: string;
  /**
   * Keep the data in this directory (mongod --dbpath): every write is journaled and flushed to disk before it
   * is acknowledged, and a restart on the same directory finds everything acknowledged. Default: in memory.
   */
  dbPath?: string;
  /** Durable mode: journal bytes after which a snapshot compacts the journal (default 64 MiB). */
  snapshotAfterJournalBytes?: number;
  /** Oplog entries kept in memory for change streams to resume from (default 100,000). */
  oplogMaxEntries?: number;
}

export interface EmbeddedMongo {
  /** `mongodb://host:port/` (with `?replicaSet=NAME` in replica-set mode) — give it to `new MongoClient(uri)`. */
  uri: string;
  host: string;
  port: number;
  /** Closes the listener and every connection; in memory the data is discarded, durable data stays on disk. */
  stop(): Promise<void>;
}

/** The server on this thread (`inWorkerThread` is index.ts's choice, made before this module loads). */
export async function startServer(options: EmbeddedMongoOptions = {}): Promise<EmbeddedMongo> {
  const host = options.host ?? "127.0.0.1";
  const cursorTimeoutMs = options.cursorTimeoutMs ?? 10 * 60_000;
  if (options.replSet !== undefined && (typeof options.replSet !== "string" || options.replSet === "")) {
    throw new Error("replSet must be a non-empty replica set name");
  }
  // In durable mode change streams may only see what is on disk; the journal makes entries visible.
  const oplog = new Oplog(options.oplogMaxEntries ?? 100_000, options.dbPath === undefined);
  const sessions = new Sessions();
  let store: Store;
  let storage: DurableStorage | undefined;
  if (options.dbPath !== undefined) {
    ({ store, storage } = await DurableStorage.open(
      {
        dbPath: options.dbPath,
        ...(options.snapshotAfterJournalBytes === undefined ? {} : { snapshotAfterJournalBytes: options.snapshotAfterJournalBytes }),
      },
      oplog,
      sessions,
    ));
  } else {
    store = new Store();
  }
  if (options.replSet !== undefined || storage) store.listener = oplog;
  const state: ServerState = {
    store,
    cursors: new CursorRegistry(cursorTimeoutMs),
    oplog,
    sessions,
    transactions: new Transactions(sessions),
    changeStreams: new ChangeStreamCursors(cursorTimeoutMs),
  };
  const sockets = new Set<net.Socket>();
  let nextConnectionId = 1;
  const waitDurable = storage ? () => storage.waitForAppended() : undefined;

  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    if (options.unref) socket.unref();
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    serveConnection(socket, state, nextConnectionId++, waitDurable);
  });

  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 0, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (err) {
    await storage?.close();
    throw err;
  }
  const port = (server.address() as net.AddressInfo).port;
  if (options.unref) server.unref();
  const uriHost = host.includes(":") ? `[${host}]` : host;
  if (options.replSet !== undefined) state.replSet = new ReplicaSetMember(options.replSet, `${uriHost}:${port}`, oplog);

  const ttlTimer = setInterval(() => sweepExpired(state.store), options.ttlSweepIntervalMs ?? 60_000);
  const reapTimer = setInterval(
    () => {
      state.cursors.reap();
      state.changeStreams.reap();
      state.sessions.reap();
      state.transactions.expire();
      state.transactions.reap();
    },
    Math.min(60_000, Math.max(50, cursorTimeoutMs / 2)),
  );
  ttlTimer.unref();
  reapTimer.unref();

  let stopped: Promise<void> | undefined;
  const stop = async () => {
    clearInterval(ttlTimer);
    clearInterval(reapTimer);
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    await closed;
    state.cursors.clear();
    state.changeStreams.clear();
    await storage?.close();
    state.store.databases.clear();
  };
  return {
    uri: `mongodb://${uriHost}:${port}/${options.replSet !== undefined ? `?replicaSet=${encodeURIComponent(options.replSet)}` : ""}`,
    host,
    port,
    stop: () => (stopped ??= stop()),
  };
}
