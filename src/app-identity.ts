// Identity: users and their lifecycle, wallet provisioning, phone verification and KYC sessions, with their
// providers (simulated unless given). Their deferred work (wallet retries, KYC expiry) is jobs: nothing to start.
import { createHmac } from "node:crypto";
import { KycSessionsService, PhoneVerificationService, SandboxService } from "../gen/svc/v1/identity_pb.ts";
import { UsersService } from "../gen/svc/v1/users_pb.ts";
import type { RegisteredService } from "./api/service-registry.ts";
import { VerificationCodes } from "./domain/phone-verification.ts";
import type { EventRelay } from "./events/event-relay.ts";
import { type KycProvider, SimulatedKycProvider } from "./identity/kyc-provider.ts";
import { SimulatedSmsSender, type SmsSender } from "./identity/sms-sender.ts";
import { KycLifecycle } from "./services/kyc-lifecycle.ts";
import { KycSessionsServiceImpl, SandboxServiceImpl } from "./services/kyc-sessions-service.ts";
import { PhoneVerificationServiceImpl } from "./services/phone-verification-service.ts";
import type { TenantSettings } from "./services/tenant-settings.ts";
import { UserLifecycle } from "./services/user-lifecycle.ts";
import { UsersServiceImpl } from "./services/users-service.ts";
import { SimulatedCustodian, type WalletCustodian } from "./wallets/custodian.ts";
import { WalletProvisioner } from "./wallets/wallet-provisioner.ts";
import type { Foundation } from "./app-foundation.ts";

interface IdentityOptions {
  settings: TenantSettings;
  relay: EventRelay;
  /** The key every process of a deployment shares (the admin token), from which verification codes are derived. */
  sharedSecret: string;
  /** The service's own address, for links it answers (sandbox KYC pages); the bound port is known at listen. */
  baseUrl: () => string;
  custodian?: WalletCustodian | undefined;
  smsSender?: SmsSender | undefined;
  kycProvider?: KycProvider | undefined;
}

export function wireIdentity({ clock, timings, repositories, jobs, onError }: Foundation, options: IdentityOptions) {
  const { settings, relay } = options;
  const backgroundError = (error: unknown) => onError(error, "event relay");
  const custodian = options.custodian ?? new SimulatedCustodian();
  const smsSender = options.smsSender ?? new SimulatedSmsSender();
  const kycProvider = options.kycProvider ?? new SimulatedKycProvider();
  const wallets = new WalletProvisioner(repositories.users, custodian, jobs, clock, {
    syncBudgetMs: timings.walletSyncBudgetMs,
    retryDelaysMs: timings.walletRetryDelaysMs,
  });
  const lifecycle = new UserLifecycle(repositories.users, relay, clock, backgroundError);
  const kyc = new KycLifecycle({
    users: repositories.users,
    archive: repositories.kycSessionArchive,
    settings,
    relay,
    provider: kycProvider,
    jobs,
    clock,
    baseUrl: options.baseUrl,
    onBackgroundError: backgroundError,
  });
  const codes = new VerificationCodes(createHmac("sha256", options.sharedSecret).update("svc phone verification codes").digest());
  const services: RegisteredService[] = [
    {
      service: UsersService,
      visibility: "public",
      implementation: new UsersServiceImpl({ users: repositories.users, settings, relay, wallets, clock, onBackgroundError: backgroundError }),
    },
    {
      service: PhoneVerificationService,
      visibility: "public",
      implementation: new PhoneVerificationServiceImpl({ users: repositories.users, sms: smsSender, codes, clock }),
    },
    { service: KycSessionsService, visibility: "public", implementation: new KycSessionsServiceImpl(kyc) },
    { service: SandboxService, visibility: "public", implementation: new SandboxServiceImpl(kyc) },
  ];
  return { custodian, smsSender, kycProvider, lifecycle, kyc, services };
}
