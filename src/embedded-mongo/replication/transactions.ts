// Multi-document transactions on the replica set, as mongod 7 runs them: each session has at most one active
// transaction (its txnNumber); a statement carrying `autocommit: false` runs against the transaction's snapshot
// and private writes (transaction.ts), commitTransaction applies the writes (transaction-commit.ts) and a retried
// commit answers the same, abortTransaction drops them. A transaction open longer than
// transactionLifetimeLimitSeconds is aborted by the server. Any error of a statement aborts its transaction.
import type { Document } from "bson";
import type { Store } from "../storage/store.ts";
import type { Oplog } from "./oplog.ts";
import { CommandError, commandError, ErrorCodes, serverErrorLabels } from "../bson/errors.ts";
import { SESSION_TIMEOUT_MINUTES, type Sessions, sessionKey, txnNumberOf } from "./sessions.ts";
import { snapshotReadTime } from "./snapshot-history.ts";
import { Transaction, type ClaimTable } from "./transaction.ts";
import { applyTransaction } from "./transaction-commit.ts";
import { checkTransactionFields, checkTransactionReadConcern, readsOnly } from "./transaction-rules.ts";
import { commitWriteConcernError } from "./transaction-write-concern.ts";

/** mongod's default transactionLifetimeLimitSeconds. */
export const DEFAULT_TRANSACTION_LIFETIME_SECONDS = 60;

/** Fields that concern the transaction, not the statement's handler. */
const TRANSACTION_FIELDS = ["autocommit", "startTransaction", "txnNumber", "readConcern"];

/** What a statement needs of its command's context; the handler gets that context with the transaction's store. */
interface StatementContext {
  server: { store: Store; oplog: Oplog; replSet?: unknown };
}

export class Transactions {
  /** The newest transaction of each session (committed and aborted ones too, to answer their retries). */
  private readonly bySession = new Map<string, Transaction>();
  private readonly open = new Set<Transaction>();
  private readonly claims: ClaimTable = new Map();
  /** setParameter transactionLifetimeLimitSeconds. */
  lifetimeLimitSeconds = DEFAULT_TRANSACTION_LIFETIME_SECONDS;

  /** `sessions` keeps each commit's reply, durable mode on disk: a commit retried after a restart is answered. */
  constructor(private readonly sessions: Sessions) {}

  /** Runs one statement of a transaction (a command carrying `autocommit`), commitTransaction and abortTransaction included. */
  run<C extends StatementContext>(cmd: Document, name: string, ctx: C, execute: (statement: Document, ctx: C) => Document): Document {
    try {
      checkTransactionFields(cmd, name);
      const restored = name === "commitTransaction" ? this.commitBeforeRestart(cmd) : undefined;
      if (restored) return withWriteConcernError({ ...restored }, cmd);
      const txn = this.transactionFor(cmd, name);
      if (name === "commitTransaction") return this.commit(txn, cmd, ctx);
      if (name === "abortTransaction") return this.abort(txn);
      return this.statement(txn, cmd, ctx, execute);
    } catch (err) {
      if (!(err instanceof CommandError)) throw err;
      const labels = serverErrorLabels(cmd, err.code);
      return labels.length ? { ...err.toReply(), errorLabels: labels } : err.toReply();
    }
  }

  /** Aborts transactions older than the lifetime limit (called before each statement and by the server's sweep). */
  expire(now = Date.now()): void {
    const limitMs = this.lifetimeLimitSeconds * 1000;
    for (const txn of this.open) {
      if (now - txn.startedAt < limitMs) continue;
      this.end(txn, "aborted", `it has been running for longer than 'transactionLifetimeLimitSeconds' (${this.lifetimeLimitSeconds} seconds)`);
    }
  }

  /** Aborts the open transactions of the sessions of `lsids` (endSessions, killSessions), or of all (killAllSessions). */
  abortSessions(lsids: unknown[] | undefined, reason: string): void {
    const sessions = lsids && new Set(lsids.map(sessionKey));
    for (const txn of this.open) if (!sessions || sessions.has(txn.session)) this.end(txn, "aborted", reason);
  }

  /** Forgets finished transactions of sessions idle past the session timeout (as the session reaper does). */
  reap(now = Date.now()): void {
    const cutoff = now - SESSION_TIMEOUT_MINUTES * 60_000;
    for (const [session, txn] of this.bySession) if (txn.state !== "inProgress" && txn.startedAt < cutoff) this.bySession.delete(session);
  }

  /** The reply of a commit this server no longer holds the transaction of (it restarted since), if it was kept. */
  private commitBeforeRestart(cmd: Document): Document | undefined {
    const session = sessionKey(cmd.lsid);
    const txnNumber = txnNumberOf(cmd);
    if (this.bySession.get(session)?.txnNumber === txnNumber) return undefined;
    return this.sessions.storedReply(session, txnNumber);
  }

  private transactionFor(cmd: Document, name: string): Transaction {
    this.expire();
    const session = sessionKey(cmd.lsid);
    const txnNumber = txnNumberOf(cmd);
    const known = this.bySession.get(session);
    if (known && txnNumber < known.txnNumber) {
      throw commandError(
        225,
        `Cannot start transaction ${txnNumber} on session ${session} because a newer transaction ${known.txnNumber} has already started.`,
        { codeName: "TransactionTooOld" },
      );
    }
    if (cmd.startTransaction === true && name !== "commitTransaction" && name !== "abortTransaction") {
      if (known?.txnNumber === txnNumber && known.state !== "aborted") {
        throw commandError(
          50911,
          `Cannot start a transaction at given transaction number ${txnNumber} a transaction with the same number is in progress.`,
        );
      }
      if (known?.state === "inProgress") this.end(known, "aborted");
      const txn = new Transaction(session, cmd.lsid as Document, txnNumber, this.claims);
      this.bySession.set(session, txn);
      this.open.add(txn);
      return txn;
    }
    if (known?.txnNumber !== txnNumber) {
      throw commandError(
        ErrorCodes.NoSuchTransaction,
        `Given transaction number ${txnNumber} does not match any in-progress transactions. The active transaction number is ${known?.txnNumber ?? -1}`,
      );
    }
    if (known.state === "aborted") {
      const why = known.abortReason ? ` because ${known.abortReason}` : "";
      throw commandError(ErrorCodes.NoSuchTransaction, `Transaction with { txnNumber: ${txnNumber} } has been aborted${why}.`);
    }
    if (known.state === "committed" && name !== "commitTransaction") {
      throw commandError(ErrorCodes.TransactionCommitted, `Transaction with { txnNumber: ${txnNumber} } has been committed.`);
    }
    return known;
  }

  private statement<C extends StatementContext>(
    txn: Transaction,
    cmd: Document,
    ctx: C,
    execute: (statement: Document, ctx: C) => Document,
  ): Document {
    const first = txn.readTs === undefined;
    checkTransactionReadConcern(cmd, first);
    // The snapshot: the first statement's atClusterTime (readConcern snapshot), else the newest write.
    if (first) txn.readTs = snapshotReadTime(cmd, ctx.server) ?? ctx.server.oplog.lastTimestamp;
    const statement: Document = { ...cmd };
    for (const field of TRANSACTION_FIELDS) delete statement[field];
    const store = txn.storeOver(ctx.server.store, ctx.server.oplog, readsOnly(Object.keys(cmd)[0] ?? ""));
    let reply: Document;
    try {
      reply = execute(statement, { ...ctx, server: { ...ctx.server, store } } as C);
    } catch (err) {
      this.end(txn, "aborted");
      throw err;
    }
    const writeError = (reply.writeErrors as Document[] | undefined)?.[0];
    if (reply.ok !== 1 || writeError) this.end(txn, "aborted");
    // In a transaction a failed write fails the whole command (mongod does not answer writeErrors there).
    if (writeError) {
      const { index: _index, code, errmsg, ...extra } = writeError;
      throw commandError(Number(code), String(errmsg), extra);
    }
    return reply;
  }

  private commit(txn: Transaction, cmd: Document, ctx: StatementContext): Document {
    if (txn.state === "committed" && txn.commitReply) return withWriteConcernError({ ...txn.commitReply }, cmd);
    try {
      applyTransaction(txn, ctx.server.store, ctx.server.oplog);
    } catch (err) {
      this.end(txn, "aborted");
      throw err;
    }
    txn.commitReply = { ok: 1 };
    this.sessions.recordCommit(txn.session, txn.txnNumber, txn.commitReply);
    this.end(txn, "committed");
    return withWriteConcernError({ ok: 1 }, cmd);
  }

  private abort(txn: Transaction): Document {
    if (txn.state === "committed") {
      throw commandError(ErrorCodes.TransactionCommitted, `Transaction with { txnNumber: ${txn.txnNumber} } has been committed.`);
    }
    this.end(txn, "aborted");
    return { ok: 1 };
  }

  private end(txn: Transaction, state: "committed" | "aborted", reason?: string): void {
    txn.finish(state, reason);
    this.open.delete(txn);
  }
}

function withWriteConcernError(reply: Document, cmd: Document): Document {
  const error = commitWriteConcernError(cmd.writeConcern);
  return error ? { ...reply, writeConcernError: error } : reply;
}
