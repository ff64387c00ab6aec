// The ledger's sweep, a recurring job run by one process at a time: it finishes what processes that stopped
// between a ledger write and its follow-up left behind, the projection of transactions in flight and the
// compaction of settled ones.
//
// Every ledger write (an opening, a move) stamps its user's `ledger.updated_at`, and what such a write may have
// left unfinished is that write's follow-up. So a sweep looks only at the users whose last write is old enough to
// be stale and later than the last sweep's window (which it overlaps a little, for writes that reach the database
// after their stamp), not at every user with a transaction in flight: a deposit pending at its provider for days
// would otherwise be read, with its projection's version, every few seconds. A process's first sweep, and one
// every FULL_SWEEP_EVERY_MS, looks at every user with a transaction in flight: the backstop for a user written so
// often that its last write is never old enough, and for a write that reached the database later than the overlap.
import type { Clock } from "../domain/clock.ts";
import { isFinal } from "../domain/transaction-transitions.ts";
import type { JobQueue } from "../jobs/job-queue.ts";
import type { TransactionRepository } from "../store/transaction-repository.ts";
import { EARLIEST_WRITE, LATEST_WRITE, ledgerOf, type UserWithLedger, type WalletLedgerRepository } from "../store/wallet-ledger.ts";

/** The recurring job of the ledger's sweep. */
const LEDGER_SWEEP_JOB = "ledger-sweep";
/** Users read per query. */
const USERS_PER_READ = 100;
/** How far a window reaches back before the end of the one before it (a write may reach the database after its stamp). */
const WINDOW_OVERLAP_MS = 5000;
/** How often a sweep looks at every user with a transaction in flight. */
const FULL_SWEEP_EVERY_MS = 10 * 60_000;

export interface LedgerSweepDependencies {
  wallets: WalletLedgerRepository;
  transactions: TransactionRepository;
  jobs: JobQueue;
  clock: Clock;
}

export class LedgerSweep {
  /** The end of this process's last window (its stale cutoff), and when its last full sweep started. */
  private sweptThrough: Date | null = null;
  private lastFullSweep = 0;

  constructor(private readonly deps: LedgerSweepDependencies) {}

  /** Schedules the sweep every `intervalMs`, for what was left for `staleAfterMs`. */
  async start(intervalMs: number, staleAfterMs: number): Promise<void> {
    await this.deps.jobs.every(LEDGER_SWEEP_JOB, intervalMs, () => this.sweep(staleAfterMs));
  }

  /**
   * Finishes the transactions in flight untouched for `staleAfterMs`, of the users written since the last sweep's
   * window (every user with one in flight at a full sweep); answers how many it looked at.
   */
  async sweep(staleAfterMs: number): Promise<number> {
    const now = this.deps.clock().getTime();
    const before = new Date(now - staleAfterMs);
    const full = this.sweptThrough === null || now - this.lastFullSweep >= FULL_SWEEP_EVERY_MS;
    const writtenAfter = full ? null : new Date(this.sweptThrough!.getTime() - WINDOW_OVERLAP_MS);
    const seen = await this.sweepUsers(before, writtenAfter);
    // Recorded once done (a sweep that failed is made again): a window ends at the cutoff, since a later write is
    // not stale yet and falls in a later window.
    if (full) this.lastFullSweep = now;
    this.sweptThrough = before;
    return seen;
  }

  private async sweepUsers(before: Date, writtenAfter: Date | null): Promise<number> {
    let seen = 0;
    let last: UserWithLedger | null = null;
    for (;;) {
      // A window reads the users written in it, a full sweep every user in flight, both from their index in the order
      // of their last write: a full sweep reads only the users in flight, however many others there are.
      const users: UserWithLedger[] = await this.deps.wallets.findWrittenWithInflight(
        last ? { at: last.ledger!.updated_at!, userId: last._id } : { at: writtenAfter ?? EARLIEST_WRITE, userId: null },
        writtenAfter === null ? LATEST_WRITE : before,
        USERS_PER_READ,
      );
      if (users.length === 0) return seen;
      last = users.at(-1)!;
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
