// Money: the wallet ledger (its steps are jobs), the transactions services and the ledger's recurring sweep.
import { SandboxTransactionsService, TransactionsService } from "../gen/svc/v1/transactions_pb.ts";
import type { RegisteredService } from "./api/service-registry.ts";
import type { EventRelay } from "./events/event-relay.ts";
import { Ledger } from "./ledger/ledger.ts";
import type { TenantSettings } from "./services/tenant-settings.ts";
import { SandboxTransactionsServiceImpl, TransactionsServiceImpl } from "./services/transactions-service.ts";
import type { WalletCustodian } from "./wallets/custodian.ts";
import type { Foundation } from "./app-foundation.ts";
import { type Worker, worker } from "./app-workers.ts";

export function wireMoney(
  { config, clock, timings, repositories, jobs, onError, runsJobs }: Foundation,
  { settings, relay, custodian }: { settings: TenantSettings; relay: EventRelay; custodian: WalletCustodian },
) {
  const ledger = new Ledger({
    wallets: repositories.walletLedger,
    transactions: repositories.transactions,
    relay,
    payouts: { payOut: (request, signal) => custodian.payOut?.(request, signal) ?? Promise.resolve() },
    jobs,
    stepConcurrency: config.ledgerStepConcurrency,
    clock,
    onBackgroundError: (error) => onError(error, "ledger"),
  });
  const money = { ledger, transactions: repositories.transactions, wallets: repositories.walletLedger, settings, clock };
  const services: RegisteredService[] = [
    { service: TransactionsService, visibility: "public", implementation: new TransactionsServiceImpl(money) },
    { service: SandboxTransactionsService, visibility: "public", implementation: new SandboxTransactionsServiceImpl(money) },
  ];
  // The ledger's sweep is a recurring job, run by one process at a time, scheduled by the processes that run jobs.
  const sweep: Worker = worker(runsJobs ? { start: () => ledger.start(timings.sweepIntervalMs, timings.sweepStaleAfterMs) } : {});
  return { ledger, services, workers: { sweep } };
}
