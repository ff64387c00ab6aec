// TCP server: frames the byte stream into messages, runs each command synchronously and writes the reply.
// A malformed frame, an oversized message or an unknown opcode closes that one connection only.
import { createRequire } from "node:module";
import net from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { Document } from "bson";
import { CursorRegistry } from "./cursors.ts";
import type { ServerState } from "./context.ts";
import { runCommand } from "./dispatch.ts";
import { deferredReply } from "./fail-points.ts";
import { Store } from "./store.ts";
import { sweepExpired } from "./ttl-sweeper.ts";
import { buildMsgReply, buildOpReply, FLAG_MORE_TO_COME, HEADER_SIZE, MAX_MESSAGE_SIZE, parseFrame } from "./wire.ts";

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
}

export interface EmbeddedMongo {
  /** `mongodb://host:port/` — give it to `new MongoClient(uri)`. */
  uri: string;
  host: string;
  port: number;
  /** Closes the listener and every connection; the data is discarded. */
  stop(): Promise<void>;
}

export async function startEmbeddedMongo(options: EmbeddedMongoOptions = {}): Promise<EmbeddedMongo> {
  if (options.inWorkerThread) return startInWorkerThread(options);
  const host = options.host ?? "127.0.0.1";
  const cursorTimeoutMs = options.cursorTimeoutMs ?? 10 * 60_000;
  const state: ServerState = { store: new Store(), cursors: new CursorRegistry(cursorTimeoutMs) };
  const sockets = new Set<net.Socket>();
  let nextConnectionId = 1;

  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    serveConnection(socket, state, nextConnectionId++);
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as net.AddressInfo).port;

  const ttlTimer = setInterval(() => sweepExpired(state.store), options.ttlSweepIntervalMs ?? 60_000);
  const reapTimer = setInterval(() => state.cursors.reap(), Math.min(60_000, Math.max(50, cursorTimeoutMs / 2)));
  ttlTimer.unref();
  reapTimer.unref();

  const uriHost = host.includes(":") ? `[${host}]` : host;
  let stopped: Promise<void> | undefined;
  const stop = async () => {
    clearInterval(ttlTimer);
    clearInterval(reapTimer);
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    await closed;
    state.cursors.clear();
    state.store.databases.clear();
  };
  return {
    uri: `mongodb://${uriHost}:${port}/`,
    host,
    port,
    stop: () => (stopped ??= stop()),
  };
}

async function startInWorkerThread(options: EmbeddedMongoOptions): Promise<EmbeddedMongo> {
  // Module loader hooks (tsx, which runs this TypeScript) are per thread: the worker registers tsx itself
  // before importing its TypeScript entry.
  const entry = new URL("./worker-entry.ts", import.meta.url).href;
  // tsx/esm/api's "import" export target, located from its package.json (require.resolve would pick the CJS build).
  const tsxRoot = path.dirname(createRequire(import.meta.url).resolve("tsx/package.json"));
  const tsxApi = pathToFileURL(path.join(tsxRoot, "dist/esm/api/index.mjs")).href;
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  const worker = new Worker(bootstrap, { eval: true, workerData: { ...options, inWorkerThread: false } });
  const address = await new Promise<{ host: string; port: number; uri: string }>((resolve, reject) => {
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`embedded MongoDB worker exited with code ${code}`)));
    worker.once("message", (m: { type: string; host: string; port: number; uri: string }) => resolve(m));
  });
  worker.removeAllListeners("exit");
  worker.removeAllListeners("error");
  worker.on("error", (err) => console.error("embedded MongoDB worker failed:", err));
  let stopped: Promise<void> | undefined;
  return {
    ...address,
    stop: () =>
      (stopped ??= new Promise<void>((resolve) => {
        worker.once("message", () => void worker.terminate().then(() => resolve()));
        worker.postMessage({ type: "stop" });
      })),
  };
}

function serveConnection(socket: net.Socket, state: ServerState, connectionId: number): void {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let expected = 0; // length of the frame being received, 0 until its header has arrived
  let held = false; // a fail point holds this connection's reply back; later frames wait (as in mongod)

  socket.on("data", (chunk: Buffer) => {
    pending.push(chunk);
    pendingBytes += chunk.length;
    // Replies to several pipelined requests in one chunk leave in one write.
    socket.cork();
    try {
      processFrames();
    } finally {
      if (!socket.destroyed) socket.uncork();
    }
  });

  function processFrames(): void {
    while (!socket.destroyed && !held) {
      if (expected === 0) {
        if (pendingBytes < 4) return;
        if (pending[0].length < 4) pending = [Buffer.concat(pending, pendingBytes)];
        expected = pending[0].readInt32LE(0);
        // Refuse oversized frames before buffering them.
        if (expected < HEADER_SIZE || expected > MAX_MESSAGE_SIZE) {
          pending = [];
          socket.destroy();
          return;
        }
      }
      if (pendingBytes < expected) return; // wait for the rest of the frame
      const buf = pending.length === 1 ? pending[0] : Buffer.concat(pending, pendingBytes);
      const frame = buf.subarray(0, expected);
      const rest = buf.subarray(expected);
      pending = rest.length ? [rest] : [];
      pendingBytes = rest.length;
      expected = 0;
      let reply = handleFrame(frame, state, connectionId);
      if (reply && !Buffer.isBuffer(reply)) {
        const later = reply;
        if (later.afterMs > 0) {
          held = true;
          setTimeout(() => {
            held = false;
            if (socket.destroyed) return;
            const r = later.settle();
            if (r === null) socket.destroy();
            else {
              if (r) socket.write(r);
              processFrames();
            }
          }, later.afterMs);
          return;
        }
        reply = later.settle();
      }
      if (reply === null) {
        pending = [];
        socket.destroy();
        return;
      }
      if (reply) socket.write(reply);
    }
  }
}

type FrameReply = Buffer | undefined | null;

/**
 * The encoded reply, undefined when the client asked for none (moreToCome), null when the connection must close;
 * or, when a fail point says so, what to answer after a delay.
 */
function handleFrame(frame: Buffer, state: ServerState, connectionId: number): FrameReply | { afterMs: number; settle(): FrameReply } {
  let request;
  try {
    request = parseFrame(frame);
  } catch {
    return null; // ProtocolError, or a BSON error from a corrupt document: drop this client only
  }
  const command: Document = request.command;
  const legacy = request.kind === "query";
  const db = request.kind === "query" ? request.fullCollectionName.split(".")[0] || "admin" : typeof command.$db === "string" ? command.$db : "admin";
  const silent = request.kind !== "query" && (request.flags & FLAG_MORE_TO_COME) !== 0;
  const encode = (reply: Document | null): FrameReply => (reply === null ? null : silent ? undefined : encodeReply(legacy ? buildOpReply : buildMsgReply, request.requestId, reply));
  const reply = runCommand(command, { db, server: state, connectionId });
  const deferred = deferredReply(reply);
  if (deferred) return { afterMs: deferred.afterMs, settle: () => encode(deferred.settle()) };
  return encode(reply);
}

function encodeReply(build: (responseTo: number, reply: Document) => Buffer, responseTo: number, reply: Document): Buffer {
  try {
    return build(responseTo, reply);
  } catch (err) {
    // e.g. a reply document over the BSON size limit: answer with an error instead of dropping the client
    return build(responseTo, { ok: 0, errmsg: (err as Error).message, code: 10334, codeName: "BSONObjectTooLarge" });
  }
}
