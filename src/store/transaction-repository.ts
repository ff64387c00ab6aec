// Transactions as clients read and list them: a projection of the wallet ledger (store/wallet-ledger.ts), which
// holds each transaction while it is in flight. Every write here is an upsert guarded by the transaction's
// version, so projections written late, twice or out of order never move a transaction backwards.
import type { Collection, Db, Filter, UpdateFilter } from "mongodb";
import type { TenantScope } from "../domain/tenant-scope.ts";
import type { TransactionStatus, TransactionType } from "../domain/money.ts";
import { byPath } from "./by-path.ts";
import { isDuplicateKeyError } from "./database.ts";
import { dropIndexesIfPresent } from "./earlier-indexes.ts";
import { batchedConditionalUpdate, batchedInsert, batchedUpdate, throwUnlessDuplicate } from "./write-batcher.ts";
import { type ListWindow, newestFirstPage, type Page } from "./list-queries.ts";

/** An index of an earlier version, replaced: the user's transactions led by the tenant, time and id descending. */
const EARLIER_INDEXES = ["user_newest_first"] as const;

/** One transaction, as the ledger holds it in flight and the projection holds it for ever. */
export interface TransactionRecord {
  id: string;
  project_id: string;
  livemode: boolean;
  user_id: string;
  wallet_id: string;
  type: TransactionType;
  amount_cents: number;
  fee_cents: number;
  status: TransactionStatus;
  failure_code: string | null;
  failure_message: string | null;
  fiat_currency: string;
  fiat_amount_minor: number;
  fiat_exponent: number;
  description: string | null;
  /** Sandbox simulator or custodian (live). */
  simulated: boolean;
  /** A live deposit's reference at its provider (RecordDeposit), unique per project and environment. */
  reference: string | null;
  /** A live withdrawal the custodian took (WalletCustodian.payOut answered): its hand-off is not tried again. */
  handed_off?: boolean;
  created_at: Date;
  updated_at: Date;
  /** 1 at creation, +1 at every change. */
  version: number;
  /**
   * The stamp (moveStamp) of the Idempotency-Key whose call made the move to the current final status; null or
   * absent when no keyed call made it (the simulator, a call without a key, or not moved yet).
   */
  moved_by?: string | null;
}

/** A deposit reference taken by its first request (RecordDeposit): what that request was, before it is opened. */
interface DepositReferenceDocument {
  /** The transaction id the reference derives. */
  _id: string;
  /** depositFingerprint of the request that took it. */
  fingerprint: string;
  created_at: Date;
}

export type TransactionDocument = Omit<TransactionRecord, "id"> & { _id: string };

/**
 * The fields of `next` that differ from `from` (a record made by spreading `from`: an unchanged field keeps its
 * value), as paths under `path` (top-level fields without one): a move writes only what it changes of a record (its
 * status, version, times and stamp), not the whole record, which the database would decode and compare field by
 * field. Their paths may name a transaction (`byPath`).
 */
export function changedFields(
  from: TransactionRecord,
  next: TransactionRecord,
  path?: string,
): { set: Record<string, unknown>; unset: Record<string, ""> | null } {
  const set = byPath<unknown>();
  let unset: Record<string, ""> | null = null;
  for (const field of Object.keys(next) as (keyof TransactionRecord)[]) {
    if (next[field] !== from[field]) set[path ? `${path}.${field}` : field] = next[field];
  }
  for (const field of Object.keys(from)) {
    if (!Object.hasOwn(next, field)) (unset ??= byPath<"">())[path ? `${path}.${field}` : field] = "";
  }
  return { set, unset };
}

function toDocument(record: TransactionRecord): TransactionDocument {
  const { id, ...rest } = record;
  return { _id: id, ...rest };
}

function toRecord(doc: TransactionDocument): TransactionRecord {
  const { _id, ...rest } = doc;
  return { id: _id, ...rest };
}

const USER_BY_TIME = "user_by_time";

export class TransactionRepository {
  private readonly collection: Collection<TransactionDocument>;
  /** Projections written at the same moment (many requests, a sweep) share one command. */
  private readonly batchedUpsert: ReturnType<typeof batchedUpdate<TransactionDocument>>;
  private readonly batchedInsertNew: ReturnType<typeof batchedInsert<TransactionDocument>>;
  private readonly batchedMove: ReturnType<typeof batchedConditionalUpdate<TransactionDocument>>;
  private readonly references: Collection<DepositReferenceDocument>;

  constructor(db: Db) {
    this.collection = db.collection<TransactionDocument>("transactions");
    this.references = db.collection<DepositReferenceDocument>("deposit_references");
    this.batchedUpsert = batchedUpdate(db, this.collection.collectionName);
    this.batchedInsertNew = batchedInsert(db, this.collection.collectionName);
    this.batchedMove = batchedConditionalUpdate(db, this.collection.collectionName);
  }

  /**
   * A user's transactions in time order (the list reads them backward, newest first). The user leads: its ids are
   * random, so a new transaction goes anywhere among the users, and a search led by the tenant compared three
   * fields at each step (the tenant's two always equal) where the user alone decides; a user belongs to one tenant,
   * which the list's query still pins. Time and id ascend, as a user's new transactions do. And a tenant's
   * transactions in time order, for the dashboard's overview (its latest, its week's volumes): without it that page
   * read every tenant's transactions. A new transaction goes to the end of its tenant's entries, where an insert
   * costs least, and a projection's update changes none of these keys.
   */
  async ensureIndexes(): Promise<void> {
    await dropIndexesIfPresent(this.collection, EARLIER_INDEXES);
    await this.collection.createIndexes([
      { key: { user_id: 1, created_at: 1, _id: 1 }, name: USER_BY_TIME },
      { key: { project_id: 1, livemode: 1, created_at: 1, _id: 1 }, name: "tenant_by_time" },
    ]);
  }

  /**
   * Writes the record unless the projection already holds this version or a later one. Two writers of the same
   * version write the same content, so either may win. `from`: "new" for the record's first version, just opened,
   * which nothing projected before unless a later version (an insert is cheaper than an upsert; a duplicate is
   * ignored); or the record it was moved from, whose projection (the same content, as every projection of a
   * version is) gets only the fields that differ. When the projection does not hold that version (not projected
   * yet, or a later one) or a move sent with it in one command did not apply, the whole record is written.
   */
  async project(record: TransactionRecord, from: TransactionRecord | "new" | null = null): Promise<void> {
    if (from === "new") {
      const error = await this.batchedInsertNew(toDocument(record));
      throwUnlessDuplicate(error);
      return;
    }
    if (from !== null && from.id === record.id && from.version < record.version) {
      const { set, unset } = changedFields(from, record);
      const update = { $set: set, ...(unset ? { $unset: unset } : {}) } as UpdateFilter<TransactionDocument>;
      if ((await this.batchedMove({ updateOne: { filter: { _id: record.id, version: from.version }, update } })) === "applied") return;
    }
    const { _id, ...fields } = toDocument(record);
    const error = await this.batchedUpsert({
      updateOne: { filter: { _id, version: { $lt: record.version } }, update: { $set: fields }, upsert: true },
    });
    // A duplicate key: the upsert met a document of this version or later, nothing to do.
    throwUnlessDuplicate(error);
  }

  /**
   * Takes the deposit reference of transaction `id` for the request `fingerprint`, unless a request took it
   * before: answers the fingerprint of the request holding it (this one's when it took it now). One insert under
   * the unique id, so of concurrent requests for different wallets exactly one holds the reference.
   */
  async takeReference(id: string, fingerprint: string, now: Date): Promise<string> {
    try {
      await this.references.insertOne({ _id: id, fingerprint, created_at: now });
      return fingerprint;
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
    }
    const holder = await this.references.findOne({ _id: id });
    if (!holder) throw new Error(`deposit reference of ${id}: a duplicate without a holder`);
    return holder.fingerprint;
  }

  /** Gives the reference back when the request holding it (`fingerprint`) was refused before opening anything. */
  async releaseReference(id: string, fingerprint: string): Promise<void> {
    await this.references.deleteOne({ _id: id, fingerprint });
  }

  async projectMany(records: readonly TransactionRecord[]): Promise<void> {
    await Promise.all(records.map((record) => this.project(record)));
  }

  async find(scope: TenantScope, id: string): Promise<TransactionRecord | null> {
    const doc = await this.collection.findOne({ _id: id, project_id: scope.projectId, livemode: scope.livemode });
    return doc ? toRecord(doc) : null;
  }

  async findById(id: string): Promise<TransactionRecord | null> {
    const doc = await this.collection.findOne({ _id: id });
    return doc ? toRecord(doc) : null;
  }

  /** The versions the projection holds of these transactions. */
  async versions(ids: readonly string[]): Promise<Map<string, number>> {
    if (ids.length === 0) return new Map();
    const docs = await this.collection.find({ _id: { $in: [...ids] } }, { projection: { version: 1 } }).toArray();
    return new Map(docs.map((doc) => [doc._id, doc.version]));
  }

  async list(
    scope: TenantScope,
    userId: string,
    options: ListWindow<TransactionRecord> & { type?: string; status?: string },
  ): Promise<Page<TransactionRecord>> {
    const filter: Filter<TransactionDocument> = { project_id: scope.projectId, livemode: scope.livemode, user_id: userId };
    if (options.type !== undefined) filter.type = options.type as TransactionType;
    if (options.status !== undefined) filter.status = options.status as TransactionStatus;
    const position = (record: TransactionRecord | null | undefined) => (record ? { created_at: record.created_at, _id: record.id } : null);
    // The user's index, not the tenant's: both order by time, and the tenant's would read every user's of the tenant.
    const page = await newestFirstPage(
      this.collection,
      filter,
      {
        limit: options.limit,
        after: position(options.after),
        before: position(options.before),
        ...(options.created ? { created: options.created } : {}),
      },
      USER_BY_TIME,
    );
    return { items: page.items.map(toRecord), hasMore: page.hasMore };
  }

  /** Every transaction of a wallet owner (tests and invariant checks). */
  async allOfUser(userId: string): Promise<TransactionRecord[]> {
    return (await this.collection.find({ user_id: userId }).toArray()).map(toRecord);
  }
}
