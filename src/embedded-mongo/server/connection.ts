// One client connection: frames the byte stream into messages and runs them one at a time, in order, as mongod
// does per connection. A command runs synchronously (a long write in passes, each synchronous, with other
// connections' commands between them: statement-passes.ts); its reply may still be late: a change stream's getMore
// waiting for events, an awaitable hello (drivers' streaming monitor), a fail point's delay, or, in durable
// mode, a write whose journal record is not yet on disk. Later frames of that connection wait meanwhile;
// other connections are not held up. A malformed frame, an oversized message or an unknown opcode closes that
// one connection only.
import type net from "node:net";
import type { Document } from "bson";
import type { CommandContext, ServerState } from "../commands/context.ts";
import { runCommand } from "../commands/dispatch.ts";
import { withPlainOptions } from "../commands/option-numbers.ts";
import { deferredReply } from "../commands/fail-points.ts";
import { runInPasses, runsInPasses } from "./statement-passes.ts";
import { buildMsgReply, buildOpReply, FLAG_MORE_TO_COME, HEADER_SIZE, MAX_MESSAGE_SIZE, parseFrame, type WireRequest } from "./wire.ts";

/** OP_MSG flag: the client accepts a stream of replies (moreToCome) to this request. */
const FLAG_EXHAUST_ALLOWED = 1 << 16;

/** Waits for the journal in durable mode (undefined when in memory). */
export type DurabilityWait = (() => Promise<void>) | undefined;

/** Encoded reply; undefined: nothing to send (moreToCome request); null: close the connection. */
type Outcome = Buffer | undefined | null;

export function serveConnection(socket: net.Socket, state: ServerState, connectionId: number, waitDurable: DurabilityWait): void {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let expected = 0; // length of the frame being received, 0 until its header has arrived
  let busy = false; // a late reply is outstanding: later frames wait, as mongod reads one request at a time
  const closed = new AbortController();
  socket.once("close", () => closed.abort());

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

  function send(outcome: Outcome): boolean {
    if (outcome === null) {
      pending = [];
      socket.destroy();
      return false;
    }
    if (outcome && !socket.destroyed) socket.write(outcome);
    return !socket.destroyed;
  }

  function processFrames(): void {
    while (!socket.destroyed && !busy) {
      if (expected === 0) {
        if (pendingBytes < 4) return;
        // pendingBytes > 0: there is a first chunk
        if (pending[0]!.length < 4) pending = [Buffer.concat(pending, pendingBytes)];
        expected = pending[0]!.readInt32LE(0);
        // Refuse oversized frames before buffering them.
        if (expected < HEADER_SIZE || expected > MAX_MESSAGE_SIZE) {
          pending = [];
          socket.destroy();
          return;
        }
      }
      if (pendingBytes < expected) return; // wait for the rest of the frame
      const buf = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
      const frame = buf.subarray(0, expected);
      const rest = buf.subarray(expected);
      pending = rest.length ? [rest] : [];
      pendingBytes = rest.length;
      expected = 0;
      const outcome = handleFrame(frame, state, { connectionId, signal: closed.signal, waitDurable, write: (b) => send(b) });
      if (outcome instanceof Promise) {
        busy = true;
        void outcome.then((late) => {
          busy = false;
          if (send(late)) processFrames();
        });
        return;
      }
      if (!send(outcome)) return;
    }
  }
}

interface FrameContext {
  connectionId: number;
  signal: AbortSignal;
  waitDurable: DurabilityWait;
  /** Writes one more reply of a reply stream (exhaust); false once the connection is gone. */
  write(reply: Buffer): boolean;
}

function handleFrame(frame: Buffer, state: ServerState, fc: FrameContext): Outcome | Promise<Outcome> {
  let request: WireRequest;
  try {
    request = parseFrame(frame);
  } catch {
    return null; // ProtocolError, or a BSON error from a corrupt document: drop this client only
  }
  const command: Document = withPlainOptions(request.command);
  const legacy = request.kind === "query";
  const db = request.kind === "query" ? request.fullCollectionName.split(".")[0] || "admin" : typeof command.$db === "string" ? command.$db : "admin";
  const silent = request.kind !== "query" && (request.flags & FLAG_MORE_TO_COME) !== 0;
  const encode = (reply: Document | null): Outcome =>
    reply === null ? null : silent ? undefined : encodeReply(legacy ? buildOpReply : buildMsgReply, request.requestId, reply);
  const ctx: CommandContext = { db, server: state, connectionId: fc.connectionId, signal: fc.signal };

  const awaitMs = awaitableHelloWait(command, state);
  if (awaitMs !== undefined) {
    const exhaust = request.kind === "msg" && (request.flags & FLAG_EXHAUST_ALLOWED) !== 0;
    return streamHello(command, ctx, awaitMs, exhaust, request.requestId, fc);
  }

  // Everything the command writes is in the journal once the journal has flushed what was appended by then.
  const finish = (reply: Document | null, wrote: boolean): Outcome | Promise<Outcome> => {
    if (reply === null) return null;
    state.replSet?.stampClusterTime(reply);
    if (fc.waitDurable && (wrote || command.txnNumber !== undefined)) {
      return fc.waitDurable().then(
        () => encode(reply),
        (err: Error) => encode(journalFailure(command, err)),
      );
    }
    return encode(reply);
  };
  const run = (execute: () => Document | null): Outcome | Promise<Outcome> => {
    const before = state.oplog.lastSeq;
    const reply = execute();
    return finish(reply, state.oplog.lastSeq !== before);
  };

  if (runsInPasses(command, ctx)) return runInPasses(command, ctx).then(({ reply, wrote }) => finish(reply, wrote));

  const before = state.oplog.lastSeq;
  const reply = runCommand(command, ctx);
  const deferred = deferredReply(reply);
  if (deferred) {
    // A fail point's delayed command runs (and writes) only when settled.
    if (deferred.afterMs <= 0) return run(() => deferred.settle());
    return delay(deferred.afterMs, fc.signal).then((open) => (open ? run(() => deferred.settle()) : undefined));
  }
  if (reply instanceof Promise) return (reply as Promise<Document>).then((late) => finish(late, false));
  return finish(reply, state.oplog.lastSeq !== before);
}

/**
 * The reply to a write whose journal write failed. A commit's outcome is then unknown to the client (applied in
 * memory, maybe not on disk): it gets the UnknownTransactionCommitResult label, as a driver gives a commit it cannot
 * tell the outcome of.
 */
function journalFailure(command: Document, err: Error): Document {
  const reply: Document = { ok: 0, errmsg: `journal write failed: ${err.message}`, code: 1, codeName: "InternalError" };
  if (Object.keys(command)[0] === "commitTransaction") reply.errorLabels = ["UnknownTransactionCommitResult"];
  return reply;
}

/**
 * The wait of an awaitable hello (a driver's streaming monitor: topologyVersion + maxAwaitTimeMS), or undefined
 * for any other command. This member's topology never changes, so a client that knows the current
 * topologyVersion hears back after maxAwaitTimeMS; one with another processId or an older counter at once.
 */
function awaitableHelloWait(command: Document, state: ServerState): number | undefined {
  const name = Object.keys(command)[0];
  if (!state.replSet || (name !== "hello" && name !== "isMaster" && name !== "ismaster")) return undefined;
  const version = command.topologyVersion as Document | undefined;
  if (!version || command.maxAwaitTimeMS === undefined) return undefined;
  const ms = Number(command.maxAwaitTimeMS);
  if (!Number.isFinite(ms) || ms < 0) return undefined; // the hello handler answers the error
  const current = state.replSet.topologyVersion();
  const sameProcess = String(version.processId) === String(current.processId);
  return sameProcess && Number(version.counter) >= 0 ? ms : 0;
}

/**
 * Answers an awaitable hello after its wait; with exhaustAllowed, keeps answering (moreToCome set, each reply
 * responding to the previous one) every maxAwaitTimeMS until the connection closes, as mongod streams them.
 */
async function streamHello(
  command: Document,
  ctx: CommandContext,
  firstWaitMs: number,
  exhaust: boolean,
  requestId: number,
  fc: FrameContext,
): Promise<Outcome> {
  const ms = Number(command.maxAwaitTimeMS);
  let waitMs = firstWaitMs;
  let responseTo = requestId;
  for (;;) {
    if (!(await delay(waitMs, fc.signal))) return undefined;
    let reply: Document | null = runCommand(command, ctx);
    const deferred = deferredReply(reply);
    if (deferred) reply = deferred.settle(); // a fail point on hello: its error, or null to close
    if (reply === null) return null;
    ctx.server.replSet?.stampClusterTime(reply);
    const encoded = encodeReply(buildMsgReply, responseTo, reply);
    if (!exhaust || reply.ok !== 1) return encoded;
    encoded.writeUInt32LE(FLAG_MORE_TO_COME, HEADER_SIZE);
    if (!fc.write(encoded)) return undefined;
    responseTo = encoded.readInt32LE(4);
    waitMs = ms;
  }
}

/** Resolves true after `ms`, or false as soon as the connection closes. */
function delay(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function encodeReply(build: (responseTo: number, reply: Document) => Buffer, responseTo: number, reply: Document): Buffer {
  try {
    return build(responseTo, reply);
  } catch (err) {
    // e.g. a reply document over the BSON size limit: answer with an error instead of dropping the client
    return build(responseTo, { ok: 0, errmsg: (err as Error).message, code: 10334, codeName: "BSONObjectTooLarge" });
  }
}
