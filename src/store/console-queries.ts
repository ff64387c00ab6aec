// Read-only queries of the dashboard that no public method answers: the operator's lists of organizations,
// projects and keys, the counts of a project's overview and where one event was delivered. Every change the
// dashboard makes goes through the services; nothing here writes.
import type { Collection, Db, Filter } from "mongodb";
import type { TenantScope } from "../domain/tenant-scope.ts";
import type { ApiKeyDocument } from "./api-key-repository.ts";
import type { EventDocument } from "./event-repository.ts";
import { newestFirstPage, type Page } from "./list-queries.ts";
import type { OrganizationDocument } from "./organization-repository.ts";
import type { ProjectDocument } from "./project-repository.ts";
import type { UserDocument } from "./user-repository.ts";
import type { WebhookDeliveryDocument } from "./webhook-delivery-repository.ts";
import type { WebhookEndpointDocument } from "./webhook-endpoint-repository.ts";

/** Counts above this are shown as "at least": counting the whole of a large project would cost a scan. */
export const COUNT_CAP = 10_000;

export interface UserListQuery {
  kyc_status?: string;
  suspended?: boolean;
  verified?: boolean;
  phone?: string;
}

export class ConsoleQueries {
  private readonly organizations: Collection<OrganizationDocument>;
  private readonly projects: Collection<ProjectDocument>;
  private readonly apiKeys: Collection<ApiKeyDocument>;
  private readonly users: Collection<UserDocument>;
  private readonly events: Collection<EventDocument>;
  private readonly endpoints: Collection<WebhookEndpointDocument>;
  private readonly deliveries: Collection<WebhookDeliveryDocument>;

  constructor(db: Db) {
    this.organizations = db.collection("organizations");
    this.projects = db.collection("projects");
    this.apiKeys = db.collection("api_keys");
    this.users = db.collection("users");
    this.events = db.collection("events");
    this.endpoints = db.collection("webhook_endpoints");
    this.deliveries = db.collection("webhook_deliveries");
  }

  listOrganizations(limit: number, after: { created_at: Date; _id: string } | null): Promise<Page<OrganizationDocument>> {
    return newestFirstPage(this.organizations, {}, { limit, after });
  }

  findOrganization(id: string): Promise<OrganizationDocument | null> {
    return this.organizations.findOne({ _id: id });
  }

  projectsOf(organizationId: string): Promise<ProjectDocument[]> {
    return this.projects.find({ organization_id: organizationId }).sort({ created_at: -1, _id: -1 }).limit(200).toArray();
  }

  findProject(id: string): Promise<ProjectDocument | null> {
    return this.projects.findOne({ _id: id });
  }

  keysOf(projectId: string): Promise<ApiKeyDocument[]> {
    return this.apiKeys.find({ project_id: projectId }).sort({ created_at: -1, _id: -1 }).limit(200).toArray();
  }

  /** How many documents of the tenant, at most COUNT_CAP. */
  async counts(scope: TenantScope): Promise<{ users: number; events: number; endpoints: number }> {
    const filter = { project_id: scope.projectId, livemode: scope.livemode };
    const [users, events, endpoints] = await Promise.all([
      this.users.countDocuments(filter, { limit: COUNT_CAP }),
      this.events.countDocuments(filter, { limit: COUNT_CAP }),
      this.endpoints.countDocuments(filter),
    ]);
    return { users, events, endpoints };
  }

  /** Endpoints disabled or failing (consecutive failures since their last success). */
  failingEndpoints(scope: TenantScope): Promise<WebhookEndpointDocument[]> {
    return this.endpoints
      .find({ project_id: scope.projectId, livemode: scope.livemode, $or: [{ enabled: false }, { consecutive_failures: { $gt: 0 } }] })
      .toArray();
  }

  /** The users of a tenant, newest first (the dashboard's list until UsersService answers one). */
  listUsers(scope: TenantScope, query: UserListQuery, limit: number, after: { created_at: Date; _id: string } | null): Promise<Page<UserDocument>> {
    const filter: Filter<UserDocument> = { project_id: scope.projectId, livemode: scope.livemode };
    if (query.kyc_status) filter.kyc_status = query.kyc_status as UserDocument["kyc_status"];
    if (query.suspended !== undefined) filter.suspended = query.suspended;
    if (query.verified !== undefined) filter.verified = query.verified;
    if (query.phone) filter.phone = query.phone;
    return newestFirstPage(this.users, filter, { limit, after });
  }

  findUser(scope: TenantScope, id: string): Promise<UserDocument | null> {
    return this.users.findOne({ _id: id, project_id: scope.projectId, livemode: scope.livemode });
  }

  /** The deliveries of one event of the tenant, one per endpoint it went to. */
  deliveriesOfEvent(scope: TenantScope, eventId: string): Promise<WebhookDeliveryDocument[]> {
    return this.deliveries.find({ event_id: eventId, project_id: scope.projectId, livemode: scope.livemode }).limit(100).toArray();
  }
}
