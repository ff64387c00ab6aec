// The ledger's sweep, a recurring job run by one process at a time: it finishes what processes that stopped
// between a ledger write and its follow-up left behind, the projection of transactions in flight and the
// compaction of settled ones.
import type { Clock } from "../domain/clock.ts";
import { isFinal } from "../domain/transaction-transitions.ts";
import type { JobQueue } from "../jobs/job-queue.ts";
import type { TransactionRepository } from "../store/transaction-repository.ts";
import { ledgerOf, type UserWithLedger, type WalletLedgerRepository } from "../store/wallet-ledger.ts";

/** The recurring job of the ledger's sweep. */
const LEDGER_SWEEP_JOB = "ledger-sweep";
/** Users read per query. */
const USERS_PER_READ = 100;

export interface LedgerSweepDependencies {
  wallets: WalletLedgerRepository;
  transactions: TransactionRepository;
  jobs: JobQueue;
  clock: Clock;
}

export class LedgerSweep {
  constructor(private readonly deps: LedgerSweepDependencies) {}

  /** Schedules the sweep every `intervalMs`, for what was left for `staleAfterMs`. */
  async start(intervalMs: number, staleAfterMs: number): Promise<void> {
    await this.deps.jobs.every(LEDGER_SWEEP_JOB, intervalMs, () => this.sweep(staleAfterMs));
  }

  /** Finishes the transactions in flight untouched for `staleAfterMs`; answers how many it looked at. */
  async sweep(staleAfterMs: number): Promise<number> {
    const before = new Date(this.deps.clock().getTime() - staleAfterMs);
    let seen = 0;
    let afterUser: string | null = null;
    for (;;) {
      const users: UserWithLedger[] = await this.deps.wallets.findWithInflight(afterUser, USERS_PER_READ);
      if (users.length === 0) return seen;
      afterUser = users.at(-1)!._id;
      // A read's users at a time: one read of the projections' versions, and the projections and compactions of
      // those users written together (a backlog of thousands of users is a few commands per read, not per user).
      const owners = users.map((user) => {
        const ledger = ledgerOf(user);
        return { user, opens: ledger.opens, stale: ledger.inflight.filter((r) => r.updated_at <= before) };
      });
      const stale = owners.flatMap((owner) => owner.stale);
      seen += stale.length;
      if (stale.length === 0) continue;
      const versions = await this.deps.transactions.versions(stale.map((r) => r.id));
      await this.deps.transactions.projectMany(stale.filter((r) => (versions.get(r.id) ?? 0) < r.version));
      await Promise.all(
        owners.map(({ user, opens, stale: ofUser }) =>
          this.deps.wallets.compact(
            user._id,
            ofUser.filter((r) => isFinal(r.status)).map((r) => r.id),
            opens,
          ),
        ),
      );
    }
  }
}
