// The request log: one document per call of a project and environment, kept 30 days (a TTL index), with the
// indexes of the list's filters. Written in batches by RequestLogWriter, never on a call's path.
import type { ChangeStream, ChangeStreamInsertDocument, Collection, Db, Filter, Timestamp } from "mongodb";
import { REQUEST_LOG_RETENTION_SECONDS, type RequestLogSource, type StatusRange } from "../domain/request-logs.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";
import type { RequestLogJson } from "../representations/request-logs.ts";
import { changeStreamStart, insertChangeStream } from "./database.ts";
import { dropIndexesIfPresent } from "./earlier-indexes.ts";
import { type ListWindow, newestFirstPage, type Page } from "./list-queries.ts";
import { rawInsertsOnce } from "./write-batcher.ts";

/**
 * The entries of refused calls: every refusal has an error code (from the catalogue, whose statuses all are 400 or
 * more) and no success has one, so this is also every entry of a status from REFUSED_FROM_STATUS up.
 */
const REFUSED = { error_code: { $type: "string" } } as const;
export const REFUSED_FROM_STATUS = 400;

/**
 * Indexes of earlier versions, replaced: every call's status (before refusals alone were), the newest-first
 * keys (time and id descending) that put each new entry before all of its tenant's, and the Idempotency-Key's
 * index led by the tenant.
 */
const EARLIER_INDEXES = [
  "tenant_status",
  "tenant_newest_first",
  "tenant_refused_status",
  "tenant_route",
  "tenant_error_code",
  "tenant_idempotency_key",
  "tenant_idempotency_key_by_time",
] as const;

/**
 * Entries per insert command: an entry holds no body, its longest field a path (a URL's, a few KiB at most), so
 * a command stays far under the 16 MiB of one.
 */
const LOGS_PER_COMMAND = 500;

/**
 * A stored entry: the RequestLog object of the API (its one definition) under the call's request id, with the
 * tenant it belongs to, and its time as a date (the retention index reads it).
 */
export type RequestLogDocument = Omit<RequestLogJson, "id" | "object" | "source" | "created_at"> & {
  /** The call's request id. */
  _id: string;
  project_id: string;
  source: RequestLogSource;
  created_at: Date;
};

/** The list's filters, each optional, all applied together. */
export interface RequestLogFilters {
  status?: StatusRange;
  error_code?: string;
  method?: string;
  route?: string;
  source?: string;
  idempotency_key?: string;
}

export class RequestLogRepository {
  private readonly collection: Collection<RequestLogDocument>;

  constructor(private readonly db: Db) {
    this.collection = db.collection<RequestLogDocument>("request_logs");
  }

  /**
   * Per tenant in time order (lists read them backward, newest first), and one index per selective filter.
   * `method` and `source` have a handful of values each: they are applied over the tenant's index rather than
   * costing every write an index of their own. Error codes and idempotency keys are indexed only where set (most
   * calls have neither), and so are statuses: an exact status worth an index is a refusal's, while a success's (200,
   * 201) is that of most calls, read over the tenant's index, so that a successful call costs no status entry.
   * Time and id ascend in every index, as new entries do, so that each entry is added at the end of its tenant's
   * keys rather than before all of them (cheaper for a B-tree, and for the embedded database's ordered chunks).
   * The Idempotency-Key leads its index: keys are random, so a new one goes anywhere among them, and a search led
   * by the tenant compared three fields at each step (the tenant's two always equal) where the key alone decides;
   * the list's query pins all three by equality, so the index answers it and its time order all the same.
   */
  async ensureIndexes(): Promise<void> {
    const inTimeOrder = { created_at: 1, _id: 1 } as const;
    await dropIndexesIfPresent(this.collection, EARLIER_INDEXES);
    await this.collection.createIndexes([
      { key: { project_id: 1, livemode: 1, ...inTimeOrder }, name: "tenant_by_time" },
      { key: { project_id: 1, livemode: 1, status: 1, ...inTimeOrder }, name: "tenant_refused_status_by_time", partialFilterExpression: REFUSED },
      { key: { project_id: 1, livemode: 1, route: 1, ...inTimeOrder }, name: "tenant_route_by_time" },
      { key: { project_id: 1, livemode: 1, error_code: 1, ...inTimeOrder }, name: "tenant_error_code_by_time", partialFilterExpression: REFUSED },
      {
        key: { idempotency_key: 1, project_id: 1, livemode: 1, ...inTimeOrder },
        name: "idempotency_key_tenant_by_time",
        partialFilterExpression: { idempotency_key: { $type: "string" } },
      },
      { key: { created_at: 1 }, name: "retention", expireAfterSeconds: REQUEST_LOG_RETENTION_SECONDS },
    ]);
  }

  /**
   * Inserts a batch; an entry already written (a batch retried after a lost acknowledgement) is skipped. A raw insert
   * command: the driver's insertMany sizes every document before serializing it, and wraps each in an operation.
   */
  async insertMany(logs: RequestLogDocument[]): Promise<void> {
    if (logs.length === 0) return;
    const duplicates = await rawInsertsOnce(this.db, this.collection.collectionName, logs, LOGS_PER_COMMAND);
    this.inserted?.(duplicates.size === 0 ? logs : logs.filter((_, i) => !duplicates.has(i)));
  }

  /** Hears of every entry this process writes (the tail's feed without change streams). */
  onInserted(listener: (logs: readonly RequestLogDocument[]) => void): void {
    this.inserted = listener;
  }

  private inserted: ((logs: readonly RequestLogDocument[]) => void) | null = null;

  /** Every entry inserted by any process, as it is written (replica sets): the feed of TailRequestLogs. */
  watchInserts(startAtOperationTime: Timestamp): ChangeStream<RequestLogDocument, ChangeStreamInsertDocument<RequestLogDocument>> {
    return insertChangeStream(this.collection, startAtOperationTime);
  }

  /** Where a change stream of inserts starts so as to miss nothing logged after this answer (database.ts). */
  changeStreamStart(): Promise<Timestamp> {
    return changeStreamStart(this.db, "request_logs");
  }

  find(scope: TenantScope, id: string): Promise<RequestLogDocument | null> {
    return this.collection.findOne({ _id: id, project_id: scope.projectId, livemode: scope.livemode });
  }

  /** Newest first, within the window (docs/contract.md, Lists). */
  list(scope: TenantScope, window: ListWindow<RequestLogDocument>, filters: RequestLogFilters): Promise<Page<RequestLogDocument>> {
    return newestFirstPage(this.collection, requestLogFilter(scope, filters), window);
  }
}

/** Whether one entry passes `filters` (the tail's test of each live entry, as `requestLogFilter` is the query's). */
export function matchesRequestLogFilters(log: RequestLogDocument, filters: RequestLogFilters): boolean {
  if (filters.status && (log.status < filters.status.gte || log.status >= filters.status.lt)) return false;
  for (const field of ["error_code", "method", "route", "source", "idempotency_key"] as const) {
    const value = filters[field];
    if (value !== undefined && log[field] !== value) return false;
  }
  return true;
}

/** The MongoDB filter of a tenant's logs matching `filters`. */
export function requestLogFilter(scope: TenantScope, filters: RequestLogFilters): Filter<RequestLogDocument> {
  const filter: Filter<RequestLogDocument> = { project_id: scope.projectId, livemode: scope.livemode };
  if (filters.status) {
    filter.status = filters.status.lt - filters.status.gte === 1 ? filters.status.gte : { $gte: filters.status.gte, $lt: filters.status.lt };
    // Said of refusals' statuses (it changes no answer), it lets the refused-status index answer.
    if (filters.status.gte >= REFUSED_FROM_STATUS) Object.assign(filter, REFUSED);
  }
  for (const field of ["error_code", "method", "route", "source", "idempotency_key"] as const) {
    const value = filters[field];
    if (value !== undefined) (filter as Record<string, unknown>)[field] = value;
  }
  return filter;
}
