// Finished KYC sessions moved out of their user's document. Sessions live in the user document so that a move,
// the user's kyc_status and its event are one write; only the unfinished ones take part in that, so once a user
// holds more than a few finished ones the oldest move here and the document stays small however many sessions
// the user opens. A finished session never changes again, so a copy here is final; a crash between the copy and
// the user's write leaves the session in both places, and readers prefer the user document's.
import type { Collection, Db } from "mongodb";
import type { StoredKycSession } from "../domain/kyc.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";

export interface ArchivedKycSessionDocument {
  /** The session's id. */
  _id: string;
  user_id: string;
  project_id: string;
  livemode: boolean;
  session: StoredKycSession;
}

export interface KycSessionOwner {
  _id: string;
  project_id: string;
  livemode: boolean;
}

export class KycSessionArchive {
  private readonly collection: Collection<ArchivedKycSessionDocument>;

  constructor(db: Db) {
    this.collection = db.collection<ArchivedKycSessionDocument>("kyc_session_archive");
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndexes([{ key: { user_id: 1, project_id: 1, livemode: 1 }, name: "by_user" }]);
  }

  /** Copies finished sessions of `owner` here; copying one twice is harmless. */
  async keep(owner: KycSessionOwner, sessions: readonly StoredKycSession[]): Promise<void> {
    if (sessions.length === 0) return;
    await this.collection.bulkWrite(
      sessions.map((session) => ({
        replaceOne: {
          filter: { _id: session.id },
          replacement: { user_id: owner._id, project_id: owner.project_id, livemode: owner.livemode, session },
          upsert: true,
        },
      })),
      { ordered: false },
    );
  }

  /** The archived session `id` in `scope` (any scope when null: internal services). */
  find(scope: TenantScope | null, id: string): Promise<ArchivedKycSessionDocument | null> {
    return this.collection.findOne({ _id: id, ...(scope ? { project_id: scope.projectId, livemode: scope.livemode } : {}) });
  }

  /** Every archived session of the user, in no particular order. */
  async sessionsOf(owner: KycSessionOwner): Promise<StoredKycSession[]> {
    const found = await this.collection.find({ user_id: owner._id, project_id: owner.project_id, livemode: owner.livemode }).toArray();
    return found.map((document) => document.session);
  }
}
