// Read-only queries of the dashboard that no public method answers: the operator's lists of organizations,
// projects and keys, the figures of a project's overview, the events about one object and where one event was
// delivered. Every change the
// dashboard makes goes through the services; nothing here writes.
import type { Collection, Db, Filter } from "mongodb";
import type { TenantScope } from "../domain/tenant-scope.ts";
import type { ApiKeyDocument } from "./api-key-repository.ts";
import type { EventDocument } from "./event-repository.ts";
import { newestFirstPage, type Page } from "./list-queries.ts";
import type { OrganizationDocument } from "./organization-repository.ts";
import type { ProjectDocument } from "./project-repository.ts";
import type { TransactionDocument } from "./transaction-repository.ts";
import type { UserDocument } from "./user-document.ts";
import type { WebhookDeliveryDocument } from "./webhook-delivery-repository.ts";
import type { WebhookEndpointDocument } from "./webhook-endpoint-repository.ts";

/** Balances and completed volumes of a tenant, in cents. */
export interface MoneyOverview {
  availableCents: number;
  pendingInCents: number;
  pendingOutCents: number;
  deposits: { dayCents: number; weekCents: number };
  withdrawals: { dayCents: number; weekCents: number };
}

/** Counts above this are shown as "at least": counting the whole of a large project would cost a scan. */
export const COUNT_CAP = 10_000;

export class ConsoleQueries {
  private readonly organizations: Collection<OrganizationDocument>;
  private readonly projects: Collection<ProjectDocument>;
  private readonly apiKeys: Collection<ApiKeyDocument>;
  private readonly users: Collection<UserDocument>;
  private readonly events: Collection<EventDocument>;
  private readonly endpoints: Collection<WebhookEndpointDocument>;
  private readonly deliveries: Collection<WebhookDeliveryDocument>;
  private readonly transactions: Collection<TransactionDocument>;

  constructor(db: Db) {
    this.organizations = db.collection("organizations");
    this.projects = db.collection("projects");
    this.apiKeys = db.collection("api_keys");
    this.users = db.collection("users");
    this.events = db.collection("events");
    this.endpoints = db.collection("webhook_endpoints");
    this.deliveries = db.collection("webhook_deliveries");
    this.transactions = db.collection("transactions");
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

  /**
   * The money of a tenant: its wallets' balances summed, and the completed deposits' and withdrawals' volumes over
   * the last 24 hours and 7 days, in cents. Read whole (a sum cannot stop early); the console's overview only.
   */
  async moneyOverview(scope: TenantScope, now: Date): Promise<MoneyOverview> {
    const tenant = { project_id: scope.projectId, livemode: scope.livemode };
    const dayAgo = new Date(now.getTime() - 24 * 60 * 60 * 1000);
    const weekAgo = new Date(now.getTime() - 7 * 24 * 60 * 60 * 1000);
    const [balances, volumes] = await Promise.all([
      this.users
        .aggregate<{ available: number; pending_in: number; pending_out: number }>([
          { $match: tenant },
          {
            $group: {
              _id: null,
              available: { $sum: "$ledger.available_cents" },
              pending_in: { $sum: "$ledger.pending_in_cents" },
              pending_out: { $sum: "$ledger.pending_out_cents" },
            },
          },
        ])
        .toArray(),
      this.transactions
        .aggregate<{ _id: string; day: number; week: number }>([
          { $match: { ...tenant, status: "completed", created_at: { $gte: weekAgo } } },
          {
            $group: {
              _id: "$type",
              week: { $sum: "$amount_cents" },
              day: { $sum: { $cond: [{ $gte: ["$created_at", dayAgo] }, "$amount_cents", 0] } },
            },
          },
        ])
        .toArray(),
    ]);
    const volume = (type: string) => volumes.find((v) => v._id === type) ?? { day: 0, week: 0 };
    return {
      availableCents: balances[0]?.available ?? 0,
      pendingInCents: balances[0]?.pending_in ?? 0,
      pendingOutCents: balances[0]?.pending_out ?? 0,
      deposits: { dayCents: volume("deposit").day, weekCents: volume("deposit").week },
      withdrawals: { dayCents: volume("withdrawal").day, weekCents: volume("withdrawal").week },
    };
  }

  /** The tenant's latest transactions, KYC decisions and failed deliveries, `limit` of each, newest first. */
  async recentActivity(scope: TenantScope, limit: number) {
    const tenant = { project_id: scope.projectId, livemode: scope.livemode };
    const [transactions, decisions, failedDeliveries] = await Promise.all([
      this.transactions.find(tenant).sort({ created_at: -1, _id: -1 }).limit(limit).toArray(),
      this.events
        .find({ ...tenant, type: { $in: ["kyc.approved", "kyc.rejected"] } })
        .sort({ created_at: -1, _id: -1 })
        .limit(limit)
        .toArray(),
      this.latestFailedDeliveries(tenant, limit),
    ]);
    return { transactions, decisions, failedDeliveries };
  }

  /**
   * The tenant's latest failed deliveries: each of its endpoints' latest (at most MAX_WEBHOOK_ENDPOINTS lists, each
   * read from the index of deliveries not succeeded by status, endpoint and time), merged. The deliveries carry their
   * tenant, but no index leads with it: one query by tenant and status would read every tenant's failures.
   */
  private async latestFailedDeliveries(tenant: { project_id: string; livemode: boolean }, limit: number): Promise<WebhookDeliveryDocument[]> {
    const endpointIds = await this.endpoints
      .find(tenant, { projection: { _id: 1 } })
      .map((endpoint) => endpoint._id)
      .toArray();
    const lists = await Promise.all(
      endpointIds.map((endpointId) =>
        this.deliveries
          .find({ ...tenant, status: "failed", endpoint_id: endpointId })
          .sort({ created_at: -1, _id: -1 })
          .limit(limit)
          .toArray(),
      ),
    );
    return lists
      .flat()
      .sort((a, b) => b.created_at.getTime() - a.created_at.getTime() || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0))
      .slice(0, limit);
  }

  /** Endpoints disabled or failing (consecutive failures since their last success). */
  failingEndpoints(scope: TenantScope): Promise<WebhookEndpointDocument[]> {
    return this.endpoints
      .find({ project_id: scope.projectId, livemode: scope.livemode, $or: [{ enabled: false }, { consecutive_failures: { $gt: 0 } }] })
      .toArray();
  }

  /** The tenant's users among `phones`, by phone. */
  async usersByPhone(scope: TenantScope, phones: readonly string[]): Promise<Map<string, string>> {
    if (phones.length === 0) return new Map();
    const users = await this.users
      .find({ project_id: scope.projectId, livemode: scope.livemode, phone: { $in: [...new Set(phones)] } }, { projection: { _id: 1, phone: 1 } })
      .toArray();
    return new Map(users.map((u) => [u.phone, u._id]));
  }

  /** The tenant's events about one object (their `data.object.id`), oldest first. */
  eventsAbout(scope: TenantScope, objectId: string): Promise<EventDocument[]> {
    return this.events
      .find({ "data.object.id": objectId, project_id: scope.projectId, livemode: scope.livemode } as Filter<EventDocument>)
      .sort({ created_at: 1, _id: 1 })
      .limit(50)
      .toArray();
  }

  /** The deliveries of one event of the tenant, one per endpoint it went to. */
  deliveriesOfEvent(scope: TenantScope, eventId: string): Promise<WebhookDeliveryDocument[]> {
    return this.deliveries.find({ event_id: eventId, project_id: scope.projectId, livemode: scope.livemode }).limit(100).toArray();
  }
}
