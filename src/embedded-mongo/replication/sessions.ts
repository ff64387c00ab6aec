// Logical sessions and retryable writes. On a replica set a write carrying lsid + txnNumber runs once: a retry of
// the same (lsid, txnNumber) answers the stored reply without applying anything again; an older txnNumber is
// refused. Statements of multi-document transactions (`autocommit: false`) are checked and run by transactions.ts;
// a standalone refuses any transaction field, as mongod's standalone does.
import { Binary, type Document } from "bson";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import { LocalSessionCache } from "./local-sessions.ts";

/** What session checks need of a command's context (the server's CommandContext has it). */
interface SessionContext {
  server: { replSet?: unknown; sessions: Sessions };
}

/** The commands a txnNumber may accompany outside a transaction (mongod's retryable write commands). */
const RETRYABLE_WRITE_COMMANDS = new Set(["insert", "update", "delete", "findAndModify", "findandmodify"]);

export const SESSION_TIMEOUT_MINUTES = 30;

interface TxnRecord {
  txnNumber: number;
  /** The reply of the completed command (unset while only some of its statements ran). */
  reply?: Document;
  /** Outcomes of the statements that ran, by stmtId, when the command was cut short (see StatementLog). */
  statements?: Map<number, StatementOutcome>;
  lastUse: number;
}

/** What one statement of an insert/update/delete added to its reply. */
export interface StatementOutcome {
  n: number;
  nModified?: number;
  upserted?: Document[] | undefined;
}

/**
 * One pass of a write command that runs its statements a slice at a time, yielding to other commands between
 * slices as mongod yields between the batches of a write. Each pass runs the command again from the statement
 * where the previous one paused, and adds what the earlier passes answered (`carried`) to its reply, so the last
 * pass answers the command's whole reply.
 */
export interface StatementPass {
  /** How many statements this pass may still run. */
  budget: number;
  /** Set when the budget ran out before the last statement: the command continues in another pass. */
  paused: boolean;
  /** The index of the first statement this pass runs: the earlier ones ran (or failed) in earlier passes. */
  next: number;
  /** The reply of the earlier passes so far (`n`, `nModified`, `upserted`, `writeErrors`). */
  carried?: Document;
}

/** What the onPrimaryTransactionalWrite fail point does to a statement: close the connection after it, fail it. */
export interface StatementFailure {
  close: boolean;
  error?: Error;
}

/**
 * The statements of the retryable write running now (commands run one at a time). As mongod does, each statement
 * is checked against the onPrimaryTransactionalWrite fail point before it runs, and when the fail point closes the
 * connection the command stops there: the statements that ran are remembered by stmtId, and the retry replays
 * their outcomes and runs only the others.
 */
export class StatementLog {
  /** The fail point closed the connection: the command stops after the current statement. */
  interrupted = false;
  private readonly replayed: StatementOutcome[] = [];

  constructor(
    readonly done: Map<number, StatementOutcome>,
    private readonly firstStmtId: number,
    private readonly stmtIds: unknown,
    private readonly failPoint?: () => StatementFailure | undefined,
    private readonly pass?: StatementPass,
  ) {}

  private stmtId(index: number): number {
    return Array.isArray(this.stmtIds) ? Number(this.stmtIds[index]) : this.firstStmtId + index;
  }

  /** Whether statement `index` already ran (in an earlier attempt): its outcome is replayed instead. */
  ran(index: number): boolean {
    const outcome = this.done.get(this.stmtId(index));
    if (outcome) this.replayed.push(outcome);
    return outcome !== undefined;
  }

  /** The first statement to consider: where the previous pass paused. */
  get firstIndex(): number {
    return this.pass?.next ?? 0;
  }

  /** Before statement `index`, which has not run: false once this pass has run its share (it pauses there). */
  mayRun(index: number): boolean {
    const pass = this.pass;
    if (!pass) return true;
    if (pass.budget <= 0) {
      pass.paused = true;
      pass.next = index;
      return false;
    }
    pass.budget--;
    return true;
  }

  /** Before a statement runs: the fail point may fail it (throws) or close the connection after it. */
  beforeRun(): void {
    const failure = this.failPoint?.();
    if (failure?.close) this.interrupted = true;
    if (failure?.error) throw failure.error;
  }

  record(index: number, outcome: StatementOutcome): void {
    this.done.set(this.stmtId(index), outcome);
  }

  /**
   * Adds the replayed statements' outcomes, and the earlier passes' reply, to the reply, as if they had run now;
   * a paused pass's reply is carried to the next pass.
   */
  complete(reply: Document): void {
    if (reply.ok !== 1) return;
    const carried = this.pass?.carried;
    const outcomes = carried ? [carried as StatementOutcome, ...this.replayed] : this.replayed;
    let upserted = (reply.upserted as Document[] | undefined) ?? [];
    for (const outcome of outcomes) {
      reply.n = Number(reply.n ?? 0) + outcome.n;
      if (reply.nModified !== undefined) reply.nModified = Number(reply.nModified) + (outcome.nModified ?? 0);
      if (outcome.upserted?.length) upserted = [...upserted, ...outcome.upserted];
    }
    if (upserted.length) reply.upserted = upserted.sort((a, b) => Number(a.index) - Number(b.index));
    // The earlier passes' statements all come before this pass's.
    const earlierErrors = (carried?.writeErrors as Document[] | undefined) ?? [];
    if (earlierErrors.length) reply.writeErrors = [...earlierErrors, ...((reply.writeErrors as Document[] | undefined) ?? [])];
    if (this.pass?.paused) {
      const { n, nModified, upserted: upsertedSoFar, writeErrors } = reply;
      this.pass.carried = { n, nModified, upserted: upsertedSoFar, writeErrors };
    }
  }
}

let runningStatements: StatementLog | undefined;

/** One pass of a write that is not a retryable write: what earlier passes ran is in the pass itself. */
function runPass(pass: StatementPass, execute: () => Document): Document {
  return runLogged(new StatementLog(new Map(), 0, undefined, undefined, pass), execute);
}

/** Runs a write under a statement log, and adds the outcomes it replayed to the reply. */
function runLogged(log: StatementLog, execute: () => Document): Document {
  runningStatements = log;
  let reply: Document;
  try {
    reply = execute();
  } finally {
    runningStatements = undefined;
  }
  log.complete(reply);
  return reply;
}

/** The statement log of the retryable write being executed, if any. */
export function currentStatementLog(): StatementLog | undefined {
  return runningStatements;
}

/** A stored retryable-write outcome, as the journal keeps it. */
export interface SessionRecord {
  lsid: string;
  txnNumber: number;
  reply: Document;
}

export function sessionKey(lsid: unknown): string {
  const id = (lsid as { id?: unknown } | null)?.id;
  if (id instanceof Binary) return id.toString("hex");
  if (id instanceof Uint8Array) return Buffer.from(id).toString("hex");
  throw commandError(ErrorCodes.TypeMismatch, "BSON field 'OperationSessionInfo.lsid.id' is the wrong type, expected type 'binData'");
}

export function txnNumberOf(cmd: Document): number {
  const v = cmd.txnNumber;
  const n = typeof v === "number" ? v : v && typeof v === "object" ? Number(String(v)) : NaN;
  if (!Number.isInteger(n))
    throw commandError(ErrorCodes.TypeMismatch, "BSON field 'OperationSessionInfo.txnNumber' is the wrong type, expected type 'long'");
  return n;
}

/**
 * Refuses what this server does not run: any transaction field on a standalone, and txnNumber without a session or
 * on a command that is not a retryable write (a transaction's statements are checked by transaction-rules.ts).
 */
export function checkSessionFields(cmd: Document, name: string, ctx: SessionContext): void {
  const transactional = cmd.startTransaction !== undefined || cmd.autocommit !== undefined;
  if (!ctx.server.replSet) {
    if (cmd.txnNumber !== undefined || transactional) {
      throw commandError(ErrorCodes.IllegalOperation, "Transaction numbers are only allowed on a replica set member or mongos");
    }
    return;
  }
  if (transactional || cmd.txnNumber === undefined) return;
  if (cmd.lsid === undefined) throw commandError(ErrorCodes.InvalidOptions, "Transaction number requires a session ID to also be specified");
  if (!RETRYABLE_WRITE_COMMANDS.has(name)) {
    throw commandError(
      50768,
      `txnNumber may only be provided for multi-document transactions and retryable write commands. autocommit:false was not provided, and ${name} is not a retryable write command.`,
    );
  }
}

export class Sessions {
  private readonly byLsid = new Map<string, TxnRecord>();
  /** Every session seen lately (what $listLocalSessions lists), retryable writes or not. */
  readonly local = new LocalSessionCache();
  /** Told about each stored outcome (durable mode journals it, so a retry after a restart is answered too). */
  onRecord?: (record: SessionRecord) => void;

  get size(): number {
    return this.byLsid.size;
  }

  /**
   * Runs a retryable write once per (lsid, txnNumber); other commands run as they are. `failPoint` is asked before
   * each statement (onPrimaryTransactionalWrite).
   */
  runRetryable(cmd: Document, execute: () => Document, failPoint?: () => StatementFailure | undefined, pass?: StatementPass): Document {
    if (cmd.txnNumber === undefined || cmd.lsid === undefined) return pass ? runPass(pass, execute) : execute();
    const lsid = sessionKey(cmd.lsid);
    const txnNumber = txnNumberOf(cmd);
    const known = this.byLsid.get(lsid);
    if (known) {
      known.lastUse = Date.now();
      if (txnNumber < known.txnNumber) {
        throw commandError(
          225,
          `Retryable write with txnNumber ${txnNumber} is prohibited on session ${lsid} because a newer retryable write with txnNumber ${known.txnNumber} has already started on this session.`,
          { codeName: "TransactionTooOld" },
        );
      }
      if (txnNumber === known.txnNumber && known.reply) return { ...known.reply };
    }
    const done = known?.txnNumber === txnNumber && known.statements ? known.statements : new Map<number, StatementOutcome>();
    const firstStmtId = typeof cmd.stmtId === "number" ? cmd.stmtId : 0;
    const log = new StatementLog(done, firstStmtId, cmd.stmtIds, failPoint, pass);
    const findAndModify = cmd.findAndModify !== undefined || cmd.findandmodify !== undefined;
    // findAndModify is one statement: the fail point is asked before it, here.
    const reply = runLogged(log, () => {
      if (findAndModify) log.beforeRun();
      return execute();
    });
    if (!findAndModify && (log.interrupted || pass?.paused || reply.writeErrors !== undefined)) {
      // Cut short by the fail point (its connection closes) or by failed statements: as mongod, only the statements
      // that ran are remembered, and a retry runs the others.
      this.byLsid.set(lsid, { txnNumber, statements: done, lastUse: Date.now() });
      return reply;
    }
    // A command that failed as a whole changed nothing: its retry must run it again.
    if (reply.ok === 1) {
      // A copy: the server stamps the reply it sends with the cluster time of that moment.
      const stored = { ...reply };
      this.byLsid.set(lsid, { txnNumber, reply: stored, lastUse: Date.now() });
      this.onRecord?.({ lsid, txnNumber, reply: stored });
    }
    return reply;
  }

  /**
   * Keeps a committed transaction's reply as the session's outcome (journaled as a retryable write's is), so a
   * commitTransaction retried after a restart is answered too; transactions share the session's txnNumbers.
   */
  recordCommit(lsid: string, txnNumber: number, reply: Document): void {
    const stored = { ...reply };
    this.byLsid.set(lsid, { txnNumber, reply: stored, lastUse: Date.now() });
    this.onRecord?.({ lsid, txnNumber, reply: stored });
  }

  /** The kept reply of the session's command or transaction `txnNumber`, if it is the session's latest. */
  storedReply(lsid: string, txnNumber: number): Document | undefined {
    const known = this.byLsid.get(lsid);
    return known?.txnNumber === txnNumber ? known.reply : undefined;
  }

  /** Reinstates a journaled outcome at start-up. */
  restore(record: SessionRecord): void {
    const known = this.byLsid.get(record.lsid);
    if (known && known.txnNumber > record.txnNumber) return;
    this.byLsid.set(record.lsid, { txnNumber: record.txnNumber, reply: record.reply, lastUse: Date.now() });
  }

  /** The latest outcome of every session, for a snapshot. */
  *records(): IterableIterator<SessionRecord> {
    for (const [lsid, r] of this.byLsid) if (r.reply) yield { lsid, txnNumber: r.txnNumber, reply: r.reply };
  }

  /** Forgets sessions idle longer than the logical session timeout, as mongod's session reaper does. */
  reap(now = Date.now()): void {
    const cutoff = now - SESSION_TIMEOUT_MINUTES * 60_000;
    for (const [lsid, r] of this.byLsid) if (r.lastUse < cutoff) this.byLsid.delete(lsid);
    this.local.reap(cutoff);
  }
}

/**
 * Wraps the retryable write commands so that, on a replica set, each (lsid, txnNumber) is applied once.
 * `statementFailure` answers what the onPrimaryTransactionalWrite fail point does to the next statement.
 */
export function withRetryableWrites<C extends SessionContext & { pass?: StatementPass }, H extends (cmd: Document, ctx: C) => Document>(
  commands: Map<string, H>,
  statementFailure: (cmd: Document, ctx: C) => StatementFailure | undefined,
): Map<string, H> {
  for (const name of RETRYABLE_WRITE_COMMANDS) {
    const handler = commands.get(name);
    if (!handler) continue;
    commands.set(name, ((cmd, ctx) =>
      ctx.server.replSet
        ? ctx.server.sessions.runRetryable(
            cmd,
            () => handler(cmd, ctx),
            () => statementFailure(cmd, ctx),
            ctx.pass,
          )
        : ctx.pass
          ? runPass(ctx.pass, () => handler(cmd, ctx))
          : handler(cmd, ctx)) as H);
  }
  return commands;
}
