// Organizations: the customers of Svc.
import type { Collection, Db } from "mongodb";
import { type ListWindow, newestFirstPage, type Page } from "./list-queries.ts";

export interface OrganizationDocument {
  _id: string;
  name: string;
  suspended: boolean;
  live_enabled: boolean;
  /** Marks the organization made by the bootstrap of a development database. */
  bootstrap?: boolean;
  created_at: Date;
}

export type OrganizationChanges = Partial<Pick<OrganizationDocument, "suspended" | "live_enabled">>;

export class OrganizationRepository {
  private readonly collection: Collection<OrganizationDocument>;

  constructor(db: Db) {
    this.collection = db.collection<OrganizationDocument>("organizations");
  }

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ bootstrap: 1 }, { unique: true, partialFilterExpression: { bootstrap: true } });
  }

  async insert(organization: OrganizationDocument): Promise<void> {
    await this.collection.insertOne(organization);
  }

  findById(id: string): Promise<OrganizationDocument | null> {
    return this.collection.findOne({ _id: id });
  }

  /** Every organization, newest first, within the window. */
  list(window: ListWindow<OrganizationDocument>): Promise<Page<OrganizationDocument>> {
    return newestFirstPage(this.collection, {}, window);
  }

  findBootstrap(): Promise<OrganizationDocument | null> {
    return this.collection.findOne({ bootstrap: true });
  }

  update(id: string, changes: OrganizationChanges): Promise<OrganizationDocument | null> {
    return this.collection.findOneAndUpdate({ _id: id }, { $set: changes }, { returnDocument: "after" });
  }
}
