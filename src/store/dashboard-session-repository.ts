// Dashboard sign-in sessions, kept server-side: the browser holds only a random token, stored here as its
// SHA-256 (a copy of this collection cannot be replayed as cookies). A TTL index removes a session once its
// idle deadline has passed; readers also check the deadline, since the TTL monitor runs only once a minute.
import type { Collection, Db } from "mongodb";

export interface DashboardSessionDocument {
  /** SHA-256 (hex) of the cookie's token. */
  _id: string;
  kind: "project" | "operator";
  /** Project sessions: the SHA-256 of the API key signed in with (as api_keys stores it), and its environment. */
  key_hash: string | null;
  livemode: boolean;
  /** Operator sessions: the SHA-256 of the admin token signed in with; a changed token ends them. */
  admin_token_hash: string | null;
  /** Sent back in every form; a change without it is refused. */
  csrf_token: string;
  /** A one-time notice shown by the next page (never a secret). */
  flash: { kind: "success" | "error"; text: string } | null;
  created_at: Date;
  last_seen_at: Date;
  /** Idle deadline: last_seen_at plus the idle lifetime. */
  expires_at: Date;
}

export class DashboardSessionRepository {
  private readonly collection: Collection<DashboardSessionDocument>;

  constructor(db: Db) {
    this.collection = db.collection<DashboardSessionDocument>("dashboard_sessions");
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([{ key: { expires_at: 1 }, name: "idle_expiry", expireAfterSeconds: 0 }]);
  }

  async insert(session: DashboardSessionDocument): Promise<void> {
    await this.collection.insertOne(session);
  }

  /** The session, if it exists and its idle deadline is after `now`. */
  findLive(id: string, now: Date): Promise<DashboardSessionDocument | null> {
    return this.collection.findOne({ _id: id, expires_at: { $gt: now } });
  }

  async touch(id: string, now: Date, expiresAt: Date): Promise<void> {
    await this.collection.updateOne({ _id: id }, { $set: { last_seen_at: now, expires_at: expiresAt } });
  }

  async setFlash(id: string, flash: DashboardSessionDocument["flash"]): Promise<void> {
    await this.collection.updateOne({ _id: id }, { $set: { flash } });
  }

  async delete(id: string): Promise<void> {
    await this.collection.deleteOne({ _id: id });
  }
}
