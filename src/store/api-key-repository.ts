// API keys, stored by the SHA-256 of their secret; the secret itself is never stored.
import type { Collection, Db, Filter } from "mongodb";
import { type ListWindow, newestFirstPage, type Page } from "./list-queries.ts";

export interface ApiKeyDocument {
  _id: string;
  project_id: string;
  organization_id: string;
  livemode: boolean;
  secret_hash: string;
  last4: string;
  /** Requests per window; null: the service default. */
  rate_limit: number | null;
  revoked_at: Date | null;
  created_at: Date;
  /** A label given at creation; absent or null when none was. */
  name?: string | null;
  /** When a request last presented the key (recorded at most once a minute per process). */
  last_used_at?: Date | null;
}

export class ApiKeyRepository {
  private readonly collection: Collection<ApiKeyDocument>;

  constructor(db: Db) {
    this.collection = db.collection<ApiKeyDocument>("api_keys");
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ secret_hash: 1 }, { unique: true });
    await this.collection.createIndex({ project_id: 1, livemode: 1 });
  }

  async insert(key: ApiKeyDocument): Promise<void> {
    await this.collection.insertOne(key);
  }

  findById(id: string): Promise<ApiKeyDocument | null> {
    return this.collection.findOne({ _id: id });
  }

  findBySecretHash(secretHash: string): Promise<ApiKeyDocument | null> {
    return this.collection.findOne({ secret_hash: secretHash });
  }

  /** Keys newest first (revoked ones too), of one project and environment when given, within the window. */
  list(
    filters: { projectId?: string | undefined; livemode?: boolean | undefined },
    window: ListWindow<ApiKeyDocument>,
  ): Promise<Page<ApiKeyDocument>> {
    const filter: Filter<ApiKeyDocument> = {};
    if (filters.projectId !== undefined) filter.project_id = filters.projectId;
    if (filters.livemode !== undefined) filter.livemode = filters.livemode;
    return newestFirstPage(this.collection, filter, window);
  }

  /** The newest active key of a project and environment. */
  findNewestActive(projectId: string, livemode: boolean): Promise<ApiKeyDocument | null> {
    return this.collection.findOne({ project_id: projectId, livemode, revoked_at: null }, { sort: { created_at: -1, _id: -1 } });
  }

  countActive(projectId: string, livemode: boolean): Promise<number> {
    return this.collection.countDocuments({ project_id: projectId, livemode, revoked_at: null });
  }

  /** Records that the key was used at `at`, unless a later use is already recorded. */
  async recordUse(id: string, at: Date): Promise<void> {
    await this.collection.updateOne({ _id: id }, { $max: { last_used_at: at } });
  }

  /** Revokes once: a second revocation keeps the first date. */
  async revoke(id: string, at: Date): Promise<ApiKeyDocument | null> {
    await this.collection.updateOne({ _id: id, revoked_at: null }, { $set: { revoked_at: at } });
    return this.findById(id);
  }
}
