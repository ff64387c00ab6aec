// One repository per collection, built over one database and their indexes ensured.
import { ApiKeyRepository } from "./store/api-key-repository.ts";
import type { Database } from "./store/database.ts";
import { EventRepository } from "./store/event-repository.ts";
import { IdempotencyRepository } from "./store/idempotency-repository.ts";
import { KycSessionArchive } from "./store/kyc-session-archive.ts";
import { OrganizationRepository } from "./store/organization-repository.ts";
import { ProjectRepository } from "./store/project-repository.ts";
import { RateLimitRepository } from "./store/rate-limit-repository.ts";
import { RequestLogRepository } from "./store/request-log-repository.ts";
import { SignupFlowRepository } from "./store/signup-flow-repository.ts";
import { TransactionRepository } from "./store/transaction-repository.ts";
import { UserRepository } from "./store/user-repository.ts";
import type { WalletLedgerRepository } from "./store/wallet-ledger.ts";
import { WebhookDeliveryRepository } from "./store/webhook-delivery-repository.ts";
import { WebhookEndpointRepository } from "./store/webhook-endpoint-repository.ts";

export interface Repositories {
  organizations: OrganizationRepository;
  projects: ProjectRepository;
  apiKeys: ApiKeyRepository;
  rateLimits: RateLimitRepository;
  idempotency: IdempotencyRepository;
  users: UserRepository;
  kycSessionArchive: KycSessionArchive;
  events: EventRepository;
  signupFlows: SignupFlowRepository;
  webhookEndpoints: WebhookEndpointRepository;
  webhookDeliveries: WebhookDeliveryRepository;
  transactions: TransactionRepository;
  walletLedger: WalletLedgerRepository;
  requestLogs: RequestLogRepository;
}

export function createRepositories(database: Database): Repositories {
  const { db } = database;
  const users = new UserRepository(db);
  return {
    organizations: new OrganizationRepository(db),
    projects: new ProjectRepository(db),
    apiKeys: new ApiKeyRepository(db),
    rateLimits: new RateLimitRepository(db),
    idempotency: new IdempotencyRepository(db),
    users,
    kycSessionArchive: new KycSessionArchive(db),
    events: new EventRepository(db),
    signupFlows: new SignupFlowRepository(db),
    webhookEndpoints: new WebhookEndpointRepository(db),
    webhookDeliveries: new WebhookDeliveryRepository(db),
    transactions: new TransactionRepository(db),
    walletLedger: users.ledger,
    requestLogs: new RequestLogRepository(db),
  };
}
