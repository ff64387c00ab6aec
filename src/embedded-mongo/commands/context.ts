// State shared by every command handler of one server instance.
import type { Document } from "bson";
import type { ChangeStreamCursors } from "../replication/change-streams.ts";
import type { CursorRegistry } from "./cursors.ts";
import type { Oplog } from "../replication/oplog.ts";
import type { ReplicaSetMember } from "../replication/replica-set.ts";
import type { Sessions, StatementPass } from "../replication/sessions.ts";
import type { Store } from "../storage/store.ts";
import type { Transactions } from "../replication/transactions.ts";

export interface ServerState {
  store: Store;
  cursors: CursorRegistry;
  /** Every write, when the server is a replica set member or durable (else nothing is recorded). */
  oplog: Oplog;
  /** Set when the server runs as a one-member replica set (`replSet` option). */
  replSet?: ReplicaSetMember;
  /** Retryable-write records per logical session (replica set only). */
  sessions: Sessions;
  /** Multi-document transactions of the sessions (replica set only). */
  transactions: Transactions;
  changeStreams: ChangeStreamCursors;
}

export interface CommandContext {
  /** The database named by the command's `$db` (or the OP_QUERY namespace). */
  db: string;
  server: ServerState;
  connectionId: number;
  /** Aborted when the client's connection closes (ends waits such as a change stream's getMore). */
  signal?: AbortSignal;
  /** Set when a long write runs its statements in passes, yielding between them (server/statement-passes.ts). */
  pass?: StatementPass;
}

/** Handlers are synchronous on purpose: a command runs to completion before any other starts (atomicity). */
export type CommandHandler = (cmd: Document, ctx: CommandContext) => Document;

/**
 * The few handlers that wait for something (a change stream's getMore awaiting events) answer a promise;
 * the command itself still runs synchronously, only its reply is late.
 */
export type AwaitingCommandHandler = (cmd: Document, ctx: CommandContext) => Document | Promise<Document>;
