// The balance of a user's wallet and the transactions in flight on it, kept in the user document (`ledger`),
// so that every change of a balance is one conditional single-document write that also records the
// transaction's new state and its events (the user's outbox). See docs/contract.md, Money, for the invariant.
import { randomUUID } from "node:crypto";
import type { Collection, Db, Filter, UpdateFilter } from "mongodb";
import { TurnBatch } from "../lib/turn-batch.ts";
import { batchedConditionalUpdate, batchedUpdate, throwDocumentError } from "./write-batcher.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";
import type { BalanceDelta } from "../domain/transaction-transitions.ts";
import type { OutboxEvent } from "./outbox.ts";
import { byPath } from "./by-path.ts";
import { changedFields, type TransactionRecord } from "./transaction-repository.ts";
import type { UserDocument } from "./user-document.ts";

/** As stored: the in-flight transactions by id (one field each, so each is updated on its own path). */
interface StoredLedger {
  available_cents: number;
  pending_in_cents: number;
  pending_out_cents: number;
  inflight: Record<string, TransactionRecord>;
  /** The ids of `inflight`, indexed: which user holds a transaction. */
  inflight_ids: string[];
  opens: number;
  compacted_through: number;
  updated_at?: Date;
  /**
   * The token of the last move of each in-flight transaction (a move sent with others in one command learns from
   * it whether its own write applied); removed with the transaction by the compaction.
   */
  moves?: Record<string, string>;
}

export interface LedgerState {
  available_cents: number;
  pending_in_cents: number;
  pending_out_cents: number;
  /** Transactions whose opening is applied and whose record has not been compacted away yet. */
  inflight: TransactionRecord[];
  /** How many transactions were ever opened on this wallet. */
  opens: number;
  /** Every compacted transaction was opened while `opens` was at most this (the fence of late openers). */
  compacted_through: number;
  /** The last change of the balance or of a transaction in flight. */
  updated_at?: Date;
}

export type UserWithLedger = UserDocument & { ledger?: StoredLedger };

export const EMPTY_LEDGER: LedgerState = {
  available_cents: 0,
  pending_in_cents: 0,
  pending_out_cents: 0,
  inflight: [],
  opens: 0,
  compacted_through: 0,
};

export function ledgerOf(user: UserDocument): LedgerState {
  const stored = (user as UserWithLedger).ledger;
  if (!stored) return EMPTY_LEDGER;
  const { inflight_ids: _ids, moves: _moves, inflight, ...rest } = stored;
  return { ...EMPTY_LEDGER, ...rest, inflight: Object.values(inflight ?? {}) };
}

/** The transaction of this id in flight on `user`'s wallet, if `user` holds it. */
export function inflightOf(user: UserDocument | null, transactionId: string): TransactionRecord | undefined {
  // Looked up by its key, without building the whole ledger state (which copies every transaction in flight).
  const inflight = (user as UserWithLedger | null)?.ledger?.inflight;
  return inflight && Object.hasOwn(inflight, transactionId) ? inflight[transactionId] : undefined;
}

/** What a ledger write answers about the wallet's owner: enough to relay events and fence compactions. */
export interface LedgerOwner {
  _id: string;
  project_id: string;
  livemode: boolean;
  /** `ledger.opens` after the write, or as read with the transaction it moves (either fences its compaction). */
  opens: number;
}

/**
 * Moves (and lookups of their holders) per command. A backlog of steps would otherwise go out as a few commands of
 * hundreds of statements: each holds the database, and then the service's event loop while it handles their
 * replies and what follows them (projections, events, compactions), for tens of milliseconds, and every request
 * in flight waits behind it. Commands of this size keep those stalls to a few milliseconds.
 */
const MOVES_PER_COMMAND = 50;

/** The fields of the user document a ledger write reads back (not the whole document: it can be large). */
const OWNER_FIELDS = { project_id: 1, livemode: 1, "ledger.opens": 1 } as const;

/** The owner as `doc` (a whole user document, or its owner fields) shows it. */
export function ownerOf(doc: UserWithLedger): LedgerOwner;
export function ownerOf(doc: UserWithLedger | null): LedgerOwner | null;
export function ownerOf(doc: UserWithLedger | null): LedgerOwner | null {
  if (!doc) return null;
  return { _id: doc._id, project_id: doc.project_id, livemode: doc.livemode, opens: doc.ledger?.opens ?? 0 };
}

function incOf(delta: BalanceDelta): Record<string, number> {
  const inc: Record<string, number> = {};
  if (delta.available) inc["ledger.available_cents"] = delta.available;
  if (delta.pending_in) inc["ledger.pending_in_cents"] = delta.pending_in;
  if (delta.pending_out) inc["ledger.pending_out_cents"] = delta.pending_out;
  return inc;
}

export interface OpeningOptions {
  delta: BalanceDelta;
  requireAvailable: number;
  /** The `opens` the opener read; null for a new id. */
  seenOpens: number | null;
  events: OutboxEvent[];
}

/** The conditional write that opens `record` (see WalletLedgerRepository.open). */
function openingWrite(scope: TenantScope, record: TransactionRecord, options: OpeningOptions) {
  const filter: Record<string, unknown> = {
    _id: record.user_id,
    project_id: scope.projectId,
    livemode: scope.livemode,
    suspended: false,
    kyc_status: "approved",
    wallet_status: "ready",
    // The first wallet, as wallets are only ever appended and their ids are unique (and a plain path keeps the
    // filter one the database matches without compiling a query).
    "wallets.id": record.wallet_id,
    "ledger.inflight_ids": { $ne: record.id },
  };
  if (options.seenOpens !== null) filter["ledger.compacted_through"] = { $not: { $gt: options.seenOpens } };
  if (options.requireAvailable > 0) filter["ledger.available_cents"] = { $gte: options.requireAvailable };
  const update = {
    $inc: { ...incOf(options.delta), "ledger.opens": 1 },
    $set: byPath<unknown>([
      [`ledger.inflight.${record.id}`, record],
      ["ledger.updated_at", record.updated_at],
    ]),
    $push: { "ledger.inflight_ids": record.id, ...(options.events.length > 0 ? { outbox: { $each: options.events } } : {}) },
  } as unknown as UpdateFilter<UserWithLedger>;
  return { filter: filter as Filter<UserWithLedger>, update };
}

export class WalletLedgerRepository {
  private readonly users: Collection<UserWithLedger>;
  /** Compactions are small, frequent and need no answer: concurrent ones share one command. */
  private readonly batchedCompact: ReturnType<typeof batchedUpdate<UserWithLedger>>;
  private readonly batchedOpen: ReturnType<typeof batchedConditionalUpdate<UserWithLedger>>;
  /**
   * Moves of transactions (the steps of many jobs, settlement calls) share one command, as do the lookups of their
   * holders: those made while the one before is under way wait for it and go together (the runs of a job batch
   * start one at a time, so a turn holds few of them), at most MOVES_PER_COMMAND in each.
   */
  private readonly batchedMove: ReturnType<typeof batchedConditionalUpdate<UserWithLedger>>;
  private readonly holders = new TurnBatch<string, UserWithLedger | null>((ids) => this.findHolders(ids), {
    oneAtATime: true,
    maxItems: MOVES_PER_COMMAND,
  });

  /** Made by UserRepository, the users collection's one repository, on its collection (see `ledger` there). */
  constructor(db: Db, users: Collection<UserDocument>) {
    this.users = users as Collection<UserWithLedger>;
    this.batchedCompact = batchedUpdate(db, users.collectionName);
    this.batchedOpen = batchedConditionalUpdate(db, users.collectionName);
    this.batchedMove = batchedConditionalUpdate(db, users.collectionName, { oneAtATime: true, maxItems: MOVES_PER_COMMAND });
  }

  find(scope: TenantScope, userId: string): Promise<UserWithLedger | null> {
    return this.users.findOne({ _id: userId, project_id: scope.projectId, livemode: scope.livemode });
  }

  /**
   * What opening `transactionId` on this user's wallet checks: the user's state, its wallets, its balance and
   * that transaction if it is in flight (not the other transactions, the profile or the outbox).
   */
  findForOpening(scope: TenantScope, userId: string, transactionId: string): Promise<UserWithLedger | null> {
    return this.users.findOne(
      { _id: userId, project_id: scope.projectId, livemode: scope.livemode },
      {
        projection: {
          project_id: 1,
          livemode: 1,
          suspended: 1,
          kyc_status: 1,
          wallet_status: 1,
          wallets: 1,
          "ledger.available_cents": 1,
          "ledger.opens": 1,
          [`ledger.inflight.${transactionId}`]: 1,
        },
      },
    );
  }

  findById(userId: string): Promise<UserWithLedger | null> {
    return this.users.findOne({ _id: userId });
  }

  /**
   * The user holding this transaction in flight, if one does: its owner fields and that transaction (not its
   * balance, outbox, profile or other transactions).
   */
  findHolder(transactionId: string): Promise<UserWithLedger | null> {
    return this.holders.add(transactionId);
  }

  /**
   * The holders of these transactions, by one query: of each, its owner fields and those of its transactions in
   * flight (not the others, its outbox nor its profile: a step reads many holders at once, and a user's outbox and
   * in-flight ids may be long).
   */
  private async findHolders(transactionIds: string[]): Promise<(UserWithLedger | null)[]> {
    const ids = [...new Set(transactionIds)];
    const projection = byPath([...Object.entries(OWNER_FIELDS), ...ids.map((id) => [`ledger.inflight.${id}`, 1] as const)]);
    const filter = ids.length === 1 ? { "ledger.inflight_ids": ids[0]! } : { "ledger.inflight_ids": { $in: ids } };
    // All in the first reply (by default a cursor answers 101 documents, then a getMore for the rest).
    const users = await this.users.find(filter, { projection, batchSize: Math.max(ids.length, 1) }).toArray();
    // Each holder's reply holds only the asked transactions it holds.
    const holderOf = new Map(users.flatMap((user) => Object.keys(user.ledger?.inflight ?? {}).map((id) => [id, user] as const)));
    return transactionIds.map((id) => holderOf.get(id) ?? null);
  }

  /**
   * Opens a transaction: applies its first balance change and records it in flight, with its events, in one
   * write. Applied only if the user may transact, the transaction is not in flight already, no transaction
   * opened after the opener read `seenOpens` was compacted since (else it might be this one), and, for a
   * withdrawal, `available` covers `requireAvailable`; and the first wallet is `record.wallet_id` (the opener may
   * know it from an earlier read). Answers the owner after the write, or null when a condition failed.
   */
  async open(scope: TenantScope, record: TransactionRecord, options: OpeningOptions): Promise<LedgerOwner | null> {
    const { filter, update } = openingWrite(scope, record, options);
    return ownerOf(await this.users.findOneAndUpdate(filter, update, { returnDocument: "after", projection: OWNER_FIELDS }));
  }

  /**
   * The same write for a new id (nothing can have been compacted under it), sent with the openings of concurrent
   * requests in one command: "applied", or "unknown" when some opening of the batch did not match (the caller
   * then reads whether its own did).
   */
  openNew(scope: TenantScope, record: TransactionRecord, options: Omit<OpeningOptions, "seenOpens">): Promise<"applied" | "unknown"> {
    const { filter, update } = openingWrite(scope, record, { ...options, seenOpens: null });
    return this.batchedOpen({ updateOne: { filter, update } });
  }

  /**
   * Moves an in-flight transaction from the status it had when read (`from`) to `next`, applying `delta` and
   * recording `events`, in one write, sent with the moves of concurrent callers in one command; false when its
   * status is no longer `from` (someone else moved it). When some move of the command did not apply, each of its
   * callers reads whether its own did: the write leaves a token of its own beside the transaction.
   */
  async transition(userId: string, from: TransactionRecord, next: TransactionRecord, delta: BalanceDelta, events: OutboxEvent[]): Promise<boolean> {
    const token = randomUUID();
    const { set, unset } = changedFields(from, next, `ledger.inflight.${next.id}`);
    const inc = incOf(delta);
    set[`ledger.moves.${next.id}`] = token;
    set["ledger.updated_at"] = next.updated_at;
    const update = {
      $set: set,
      ...(unset ? { $unset: unset } : {}),
      ...(Object.keys(inc).length > 0 ? { $inc: inc } : {}),
      ...(events.length > 0 ? { $push: { outbox: { $each: events } } } : {}),
    } as unknown as UpdateFilter<UserWithLedger>;
    const filter = byPath<unknown>([
      ["_id", userId],
      [`ledger.inflight.${from.id}.version`, from.version],
      [`ledger.inflight.${from.id}.status`, from.status],
    ]);
    if ((await this.batchedMove({ updateOne: { filter: filter as Filter<UserWithLedger>, update } })) === "applied") return true;
    // Only the last move's token is kept. Another's token, or none (compacted), means another mover's write applied
    // instead; or, after a move to a status that is not final, that another moved it on since, which leaves this
    // move nothing to do (such a move has no events and no balance change, and its projection is superseded).
    const after = await this.users.findOne({ _id: userId }, { projection: { [`ledger.moves.${next.id}`]: 1 } });
    return after?.ledger?.moves?.[next.id] === token;
  }

  /**
   * Removes settled transactions (already projected) from the ledger, raising the fence to `opensSeen`, an
   * `opens` counter read once they were opened (each was opened at or before it); and, in the same write, the
   * events `loggedEventIds` (logged and fanned out already) from the outbox.
   */
  async compact(userId: string, transactionIds: readonly string[], opensSeen: number, loggedEventIds: readonly string[] = []): Promise<void> {
    if (transactionIds.length === 0) return;
    // A settled transaction stays settled until compacted, and is never opened again (the fence): no condition
    // beyond the callers' (each id was settled when read) is needed.
    const error = await this.batchedCompact({
      updateOne: {
        filter: { _id: userId },
        update: {
          $unset: byPath(
            transactionIds.flatMap((id) => [
              [`ledger.inflight.${id}`, ""],
              [`ledger.moves.${id}`, ""],
            ]),
          ),
          $pull: {
            // One id (the common case) as a plain value: a condition ($in) costs the database a query compiled per write.
            "ledger.inflight_ids": transactionIds.length === 1 ? transactionIds[0] : { $in: [...transactionIds] },
            ...(loggedEventIds.length > 0 ? { outbox: { id: { $in: [...loggedEventIds] } } } : {}),
          },
          $max: { "ledger.compacted_through": opensSeen },
        } as unknown as UpdateFilter<UserWithLedger>,
      },
    });
    if (error) throwDocumentError(error);
  }

  /**
   * Users with a transaction in flight (some may have been left mid-way by a process that stopped) whose last ledger
   * write (an opening or a move) is after `from` and at or before `through`, in the order of that write's time and
   * then of id, from the index of users in flight by their last write (`ledger_written`): a page reads only its own
   * users. `from` is where the page before ended: its last user's time and id (the next users are those of that time
   * with a later id, then the later times), or a time alone (the users after it). Of each user, its transactions in
   * flight, its `opens` and its last write's time only (not its profile, wallets and outbox); the caller looks at
   * each transaction's own time.
   */
  async findWrittenWithInflight(from: WrittenCursor, through: Date, limit: number): Promise<UserWithLedger[]> {
    const page = (filter: Filter<UserWithLedger>, count: number) =>
      this.users
        .find({ ...IN_FLIGHT, ...filter }, { projection: SWEPT_FIELDS })
        .sort(BY_LAST_WRITE)
        .limit(count)
        .toArray();
    const sameTime = from.userId === null ? [] : await page({ "ledger.updated_at": from.at, _id: { $gt: from.userId } }, limit);
    if (sameTime.length >= limit) return sameTime;
    return [...sameTime, ...(await page({ "ledger.updated_at": { $gt: from.at, $lte: through } }, limit - sameTime.length))];
  }
}

/** Where a page of `findWrittenWithInflight` starts: after the user `userId` written at `at`, or after `at` (null). */
export interface WrittenCursor {
  at: Date;
  userId: string | null;
}

/** The earliest and latest times a Date holds: a page from the first and through the last reads every user in flight. */
export const EARLIEST_WRITE = new Date(-8.64e15);
export const LATEST_WRITE = new Date(8.64e15);

/** A user with a transaction in flight, as the index `ledger_written` (UserRepository) holds only those. */
const IN_FLIGHT = { "ledger.inflight_ids.0": { $exists: true } } as const;
/** The order of that index: the last ledger write's time, then id. */
const BY_LAST_WRITE = { "ledger.updated_at": 1, _id: 1 } as const;
/** What a sweep reads of a user in flight. */
const SWEPT_FIELDS = { "ledger.inflight": 1, "ledger.opens": 1, "ledger.updated_at": 1 } as const;
