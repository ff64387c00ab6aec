// One multi-document transaction: its snapshot (read time), its private store, and its write set. Conflicts are
// found as mongod finds them, when a statement writes: a document some other open transaction has written, or
// one changed by a commit after this transaction's snapshot, answers 112 WriteConflict (first writer wins).
import { Long, type Binary, type Document, type Timestamp } from "bson";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import type { NamespaceCommand, WriteListener, WrittenCollection } from "../storage/write-listener.ts";
import type { Oplog } from "./oplog.ts";
import { documentKey } from "./snapshot-history.ts";
import type { Store } from "../storage/store.ts";
import { TransactionStore } from "./transaction-store.ts";

export type TransactionState = "inProgress" | "committed" | "aborted";

/** One write of the transaction, in statement order, as the commit replays it on the live store. */
export type TransactionWrite =
  | { op: "i"; db: string; coll: string; doc: Document }
  | { op: "u"; db: string; coll: string; pre: Document; post: Document; replacement: boolean }
  | { op: "d"; db: string; coll: string; pre: Document }
  | { op: "create"; db: string; coll: string; options: Document; uuid: Binary | undefined }
  | { op: "createIndex"; db: string; coll: string; spec: Document };

/** A document the transaction wrote, and the version it saw before its first write (null: absent). */
export interface WriteClaim {
  db: string;
  coll: string;
  id: unknown;
  seen: Document | null;
}

/** Who holds which document: the open transactions' write claims, shared by every session of the server. */
export type ClaimTable = Map<string, Transaction>;

export function writeConflict(): Error {
  return commandError(112, "Write conflict during plan execution and yielding is disabled. :: Please retry your write");
}

export class Transaction implements WriteListener {
  state: TransactionState = "inProgress";
  readonly startedAt = Date.now();
  /** Set by the first statement: every read of the transaction sees the store as of this time. */
  readTs: Timestamp | undefined;
  readonly writes: TransactionWrite[] = [];
  readonly claims = new Map<string, WriteClaim>();
  /** Collections this transaction created (only these may get indexes inside it, as in mongod). */
  private readonly created = new Set<string>();
  /** The reply of its commit, answered again to a retried commitTransaction. */
  commitReply: Document | undefined;
  /** Why the server aborted it (its lifetime ran out), for the next statement's error. */
  abortReason: string | undefined;
  private store: TransactionStore | undefined;
  /** The live store the transaction runs over (its writes' conflicts are judged against it). */
  private live: Store | undefined;

  constructor(
    /** The session id as hex, and as the client sent it (`{id: UUID}`). */
    readonly session: string,
    readonly lsid: Document,
    readonly txnNumber: number,
    private readonly claimTable: ClaimTable,
  ) {}

  get txnNumberLong(): Long {
    return Long.fromNumber(this.txnNumber);
  }

  /** The transaction's private view of `live`, created at its first statement; `readOnly`: the statement only reads. */
  storeOver(live: Store, oplog: Oplog, readOnly: boolean): Store {
    this.readTs ??= oplog.lastTimestamp;
    this.store ??= new TransactionStore(live, oplog, this.readTs, this);
    this.store.readOnly = readOnly;
    this.live = live;
    return this.store;
  }

  /** Ends the transaction (committed or aborted): its claims go, its private store is dropped. */
  finish(state: TransactionState, reason?: string): void {
    this.state = state;
    this.abortReason = reason;
    this.store = undefined;
    for (const key of this.claims.keys()) if (this.claimTable.get(key) === this) this.claimTable.delete(key);
    // Kept only to answer a retried commit: the writes and their documents can go.
    this.claims.clear();
    this.writes.length = 0;
  }

  // WriteListener: the private store reports each write of the transaction's statements here.
  inserted(coll: WrittenCollection, doc: Document): void {
    this.claim(coll, doc._id, null);
    this.writes.push({ op: "i", db: coll.db, coll: coll.name, doc });
  }

  updated(coll: WrittenCollection, pre: Document, post: Document, replacement: boolean): void {
    this.claim(coll, pre._id, pre);
    this.writes.push({ op: "u", db: coll.db, coll: coll.name, pre, post, replacement });
  }

  deleted(coll: WrittenCollection, pre: Document): void {
    this.claim(coll, pre._id, pre);
    this.writes.push({ op: "d", db: coll.db, coll: coll.name, pre });
  }

  command(db: string, command: NamespaceCommand): void {
    const ns = `${db}.${"coll" in command ? command.coll : ""}`;
    if (command.cmd === "create") {
      if (this.live?.get(db, command.coll)) throw writeConflict();
      this.created.add(ns);
      this.writes.push({ op: "create", db, coll: command.coll, options: command.options, uuid: command.uuid });
      return;
    }
    if (command.cmd === "createIndex") {
      if (!this.created.has(ns)) {
        throw commandError(
          ErrorCodes.OperationNotSupportedInTransaction,
          `Cannot create new indexes on existing collection ${ns} in a multi-document transaction.`,
        );
      }
      this.writes.push({ op: "createIndex", db, coll: command.coll, spec: command.spec });
      return;
    }
    throw commandError(ErrorCodes.OperationNotSupportedInTransaction, `Cannot run '${command.cmd}' in a multi-document transaction.`);
  }

  /**
   * Before the first write of a document: nobody else may hold it, and the live store must still have the version
   * this transaction's snapshot saw; else 112 WriteConflict.
   */
  private claim(coll: WrittenCollection, id: unknown, seen: Document | null): void {
    const key = `${coll.db}.${coll.name}\u0000${documentKey(id)}`;
    if (this.claims.has(key)) return;
    const holder = this.claimTable.get(key);
    if (holder && holder !== this && holder.state === "inProgress") throw writeConflict();
    const live = this.live?.get(coll.db, coll.name);
    const current = live ? (live.documentById(id)?.doc ?? null) : null;
    if (current !== seen) throw writeConflict();
    this.claims.set(key, { db: coll.db, coll: coll.name, id, seen });
    this.claimTable.set(key, this);
  }
}
