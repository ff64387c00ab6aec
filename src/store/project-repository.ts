// Projects: each holds users, webhook endpoints and API keys, in a sandbox and a live environment.
import type { Collection, Db, Filter } from "mongodb";
import { type ListWindow, newestFirstPage, type Page } from "./list-queries.ts";

export interface ProjectDocument {
  _id: string;
  organization_id: string;
  name: string;
  /** The flat fee of every withdrawal, in cents; absent means 0. */
  withdrawal_fee_cents?: number;
  live_wallets_enabled: boolean;
  /** Live keys may verify phone numbers; absent (projects made before the setting) means false. */
  live_phone_verification_enabled?: boolean;
  /** Live keys may open KYC sessions; absent means false. */
  live_kyc_enabled?: boolean;
  created_at: Date;
}

export type ProjectChanges = Partial<Pick<ProjectDocument, "live_wallets_enabled" | "live_phone_verification_enabled" | "live_kyc_enabled">>;

export class ProjectRepository {
  private readonly collection: Collection<ProjectDocument>;

  constructor(db: Db) {
    this.collection = db.collection<ProjectDocument>("projects");
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ organization_id: 1, created_at: -1 });
  }

  async insert(project: ProjectDocument): Promise<void> {
    await this.collection.insertOne(project);
  }

  findById(id: string): Promise<ProjectDocument | null> {
    return this.collection.findOne({ _id: id });
  }

  /** Projects newest first, of one organization when given, within the window. */
  list(organizationId: string | undefined, window: ListWindow<ProjectDocument>): Promise<Page<ProjectDocument>> {
    const filter: Filter<ProjectDocument> = organizationId !== undefined ? { organization_id: organizationId } : {};
    return newestFirstPage(this.collection, filter, window);
  }

  findFirstOfOrganization(organizationId: string): Promise<ProjectDocument | null> {
    return this.collection.findOne({ organization_id: organizationId }, { sort: { created_at: 1 } });
  }

  update(id: string, changes: ProjectChanges): Promise<ProjectDocument | null> {
    return this.collection.findOneAndUpdate({ _id: id }, { $set: changes }, { returnDocument: "after" });
  }

  setWithdrawalFee(id: string, cents: number): Promise<ProjectDocument | null> {
    return this.collection.findOneAndUpdate({ _id: id }, { $set: { withdrawal_fee_cents: cents } }, { returnDocument: "after" });
  }
}
