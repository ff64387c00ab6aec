// Users of a project and environment. A user document also holds its wallets and an outbox of events not yet
// relayed to the event log, so a user and its events are written in one single-document write.
import type { Collection, Db, Filter, UpdateFilter } from "mongodb";
import type { TenantScope } from "../domain/tenant-scope.ts";
import type { OutboxEvent } from "./outbox.ts";
import type { KycStatus } from "../domain/kyc.ts";
import type { UserDocument, WalletRecord, WalletStatus } from "./user-document.ts";
import { type ListWindow, newestFirstPage, type Page } from "./list-queries.ts";
import { asUniqueConflict } from "./unique-conflict.ts";
import { WalletLedgerRepository } from "./wallet-ledger.ts";
import { batchedInsert, rawUpdates, throwDocumentError } from "./write-batcher.ts";

/** Exact-match filters of the user list. */
export interface UserListFilters {
  external_id?: string | undefined;
  phone?: string | undefined;
  /** Lowercased, as `tagname_key` holds it. */
  tagname_key?: string | undefined;
  kyc_status?: KycStatus | undefined;
  verified?: boolean | undefined;
  suspended?: boolean | undefined;
}

/** The unique values of a user, by the document field their index covers. */
const UNIQUE_FIELDS = { phone: "phone", external_id: "external_id", tagname_key: "tagname", _id: "id" } as const;

/** Outbox removals per command: each a user id and a few event ids, so a full command stays far under 16 MiB. */
const OUTBOX_REMOVALS_PER_COMMAND = 1000;

/** The users collection's one repository: every write of a user document goes through it or its `ledger`. */
export class UserRepository {
  private readonly collection: Collection<UserDocument>;
  /** The wallet ledger's writes (balances and transactions in flight), on this collection. */
  readonly ledger: WalletLedgerRepository;
  // Creations arriving together share one insert command.
  private readonly batchInsert: ReturnType<typeof batchedInsert<UserDocument>>;

  constructor(private readonly db: Db) {
    this.collection = db.collection<UserDocument>("users");
    this.ledger = new WalletLedgerRepository(db, this.collection);
    this.batchInsert = batchedInsert(db, this.collection.collectionName, { explainDuplicates: true });
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([
      { key: { project_id: 1, livemode: 1, phone: 1 }, name: "phone_unique", unique: true },
      {
        key: { project_id: 1, livemode: 1, external_id: 1 },
        name: "external_id_unique",
        unique: true,
        partialFilterExpression: { external_id: { $type: "string" } },
      },
      {
        key: { project_id: 1, livemode: 1, tagname_key: 1 },
        name: "tagname_unique",
        unique: true,
        partialFilterExpression: { tagname_key: { $type: "string" } },
      },
      // The user list, newest first, and its filters that are not unique values (those use the indexes above).
      { key: { project_id: 1, livemode: 1, created_at: -1, _id: -1 }, name: "list_newest" },
      { key: { project_id: 1, livemode: 1, kyc_status: 1, created_at: -1, _id: -1 }, name: "list_by_kyc_status" },
      { key: { project_id: 1, livemode: 1, verified: 1, created_at: -1, _id: -1 }, name: "list_by_verified" },
      { key: { project_id: 1, livemode: 1, suspended: 1, created_at: -1, _id: -1 }, name: "list_by_suspended" },
      // KYC sessions are found by id (GET /v1/kyc-sessions/{id}, AdminService.RecordKycDecision).
      { key: { "kyc_sessions.id": 1 }, name: "kyc_session_id", partialFilterExpression: { "kyc_sessions.0": { $exists: true } } },
      // The relay sweeper looks for users whose outbox still holds events.
      { key: { "outbox.created_at": 1 }, name: "outbox_pending", partialFilterExpression: { "outbox.0": { $exists: true } } },
      // The ledger sweeper looks for transactions left in flight by a process that stopped.
      { key: { "ledger.inflight_ids": 1 }, name: "ledger_inflight", sparse: true },
      // ...among the users in flight whose last ledger write falls in its window: without this index each sweep
      // read every user, one command that held the database for as long as the users took to read.
      {
        key: { "ledger.updated_at": 1, _id: 1 },
        name: "ledger_written",
        partialFilterExpression: { "ledger.inflight_ids.0": { $exists: true } },
      },
    ]);
  }

  /** Throws a UniqueConflict (`phone`, `external_id`, `tagname` or `id`) when one of them is taken. */
  async insert(user: UserDocument): Promise<void> {
    const error = await this.batchInsert(user);
    if (!error) return;
    try {
      throwDocumentError(error);
    } catch (thrown) {
      throw asUniqueConflict(thrown, UNIQUE_FIELDS);
    }
  }

  find(scope: TenantScope, id: string): Promise<UserDocument | null> {
    return this.collection.findOne({ _id: id, project_id: scope.projectId, livemode: scope.livemode });
  }

  /** The user holding KYC session `sessionId`, in `scope` (any scope when null: internal services). */
  findByKycSession(scope: TenantScope | null, sessionId: string): Promise<UserDocument | null> {
    return this.collection.findOne({ "kyc_sessions.id": sessionId, ...(scope ? { project_id: scope.projectId, livemode: scope.livemode } : {}) });
  }

  /** Users of the tenant matching every filter given, newest first, within the window (docs/contract.md, Lists). */
  list(scope: TenantScope, filters: UserListFilters, options: ListWindow<UserDocument>): Promise<Page<UserDocument>> {
    const filter: Filter<UserDocument> = { project_id: scope.projectId, livemode: scope.livemode };
    for (const [name, value] of Object.entries(filters)) {
      if (value !== undefined) (filter as Record<string, unknown>)[name] = value;
    }
    return newestFirstPage(this.collection, filter, options);
  }

  findById(id: string): Promise<UserDocument | null> {
    return this.collection.findOne({ _id: id });
  }

  /**
   * Applies `update` to the user of this tenant and answers the user after it, or null when there is none.
   * A tagname taken by another user is thrown as a UniqueConflict.
   */
  async update(
    scope: TenantScope,
    id: string,
    update: UpdateFilter<UserDocument>,
    extraFilter: Filter<UserDocument> = {},
  ): Promise<UserDocument | null> {
    try {
      return await this.collection.findOneAndUpdate({ ...extraFilter, _id: id, project_id: scope.projectId, livemode: scope.livemode }, update, {
        returnDocument: "after",
      });
    } catch (error) {
      throw asUniqueConflict(error, UNIQUE_FIELDS);
    }
  }

  /** Records the wallet of a user whose wallet was pending; answers the user after, or null if it was not pending. */
  addReadyWallet(userId: string, wallet: WalletRecord, now: Date): Promise<UserDocument | null> {
    return this.collection.findOneAndUpdate(
      { _id: userId, wallet_status: { $in: ["pending", "failed"] } },
      { $set: { wallet_status: "ready", updated_at: now }, $push: { wallets: wallet } },
      { returnDocument: "after" },
    );
  }

  /**
   * Records the first wallet of a user created a moment ago, replacing its outbox with `outbox` while the
   * events `unrelayed` are still there (else only the wallet is recorded).
   */
  async recordWallet(userId: string, wallet: WalletRecord, snapshot: { unrelayed: string[]; outbox: OutboxEvent[] }): Promise<UserDocument | null> {
    const withOutbox = await this.collection.findOneAndUpdate(
      { _id: userId, wallet_status: "pending", outbox: { $size: snapshot.unrelayed.length }, "outbox.id": { $all: snapshot.unrelayed } },
      { $set: { wallet_status: "ready", outbox: snapshot.outbox }, $push: { wallets: wallet } },
      { returnDocument: "after" },
    );
    return withOutbox ?? this.addReadyWallet(userId, wallet, wallet.created_at);
  }

  async setWalletStatus(userId: string, from: WalletStatus, to: WalletStatus, now: Date): Promise<void> {
    await this.collection.updateOne({ _id: userId, wallet_status: from }, { $set: { wallet_status: to, updated_at: now } });
  }

  /** Removes relayed events from users' outboxes: event ids by user id. */
  async removeFromOutboxes(eventIdsByUser: ReadonlyMap<string, string[]>): Promise<void> {
    if (eventIdsByUser.size === 0) return;
    // A raw update command, as the ledger's writes of the same documents: the driver's bulk write would size every
    // statement before serializing it.
    const updates = [...eventIdsByUser].map(([userId, eventIds]) => ({ q: { _id: userId }, u: { $pull: { outbox: { id: { $in: eventIds } } } } }));
    await rawUpdates(this.db, this.collection.collectionName, updates, OUTBOX_REMOVALS_PER_COMMAND);
  }

  /** Users whose outbox holds events older than `before` (their request may have died before relaying). */
  findWithStaleOutbox(before: Date, limit: number): Promise<UserDocument[]> {
    return this.collection
      .find({ "outbox.0": { $exists: true }, "outbox.created_at": { $lte: before } })
      .limit(limit)
      .toArray();
  }
}
