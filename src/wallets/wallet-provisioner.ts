// Live wallets: one attempt at the custodian right after the user is created (within a 2 s budget), then a
// durable job retries after 10 s, 1 m, 5 m, 30 m and 2 h before the wallet is marked failed.
import type { Clock } from "../domain/clock.ts";
import type { JobQueue } from "../jobs/job-queue.ts";
import type { UserDocument, WalletRecord } from "../store/user-document.ts";
import type { UserRepository } from "../store/user-repository.ts";
import type { WalletCustodian } from "./custodian.ts";

export const PROVISION_WALLET_JOB = "provision-wallet";

export interface WalletProvisionerOptions {
  syncBudgetMs: number;
  /** Delays before retries 1..n; after the last retry fails the wallet is failed. */
  retryDelaysMs: number[];
}

interface ProvisionWalletJob {
  userId: string;
  /** 1-based number of the retry this job is. */
  retry: number;
}

export class WalletProvisioner {
  constructor(
    private readonly users: UserRepository,
    private readonly custodian: WalletCustodian,
    private readonly jobs: JobQueue,
    private readonly clock: Clock,
    private readonly options: WalletProvisionerOptions,
  ) {
    jobs.define<ProvisionWalletJob>(PROVISION_WALLET_JOB, (job) => this.retry(job));
  }

  /**
   * The synchronous attempt right after creation: the wallet when the custodian answered within the budget,
   * else null (a retry job is then scheduled). The caller records the wallet.
   */
  async tryNow(user: UserDocument): Promise<WalletRecord | null> {
    const wallet = await this.attempt(user);
    if (!wallet) await this.scheduleRetry(user._id, 1);
    return wallet;
  }

  private async retry(job: ProvisionWalletJob): Promise<void> {
    const user = await this.users.findById(job.userId);
    if (user?.wallet_status !== "pending") return;
    const wallet = await this.attempt(user);
    if (wallet && (await this.users.addReadyWallet(user._id, wallet, wallet.created_at))) return;
    if (job.retry < this.options.retryDelaysMs.length) {
      await this.scheduleRetry(user._id, job.retry + 1);
    } else {
      await this.users.setWalletStatus(user._id, "pending", "failed", this.clock());
    }
  }

  private async scheduleRetry(userId: string, retry: number): Promise<void> {
    const at = new Date(this.clock().getTime() + this.options.retryDelaysMs[retry - 1]!);
    // Unique per retry, not per user: the running job is still stored while it schedules the next, and
    // upserting onto it would let its completion delete the next retry.
    await this.jobs.schedule<ProvisionWalletJob>(PROVISION_WALLET_JOB, { userId, retry }, at, ["userId", "retry"]);
  }

  /** One call at the custodian within the budget; the wallet when it worked, else null. */
  private async attempt(user: UserDocument): Promise<WalletRecord | null> {
    try {
      const { walletId } = await this.custodian.createWallet(
        { userId: user._id, projectId: user.project_id },
        AbortSignal.timeout(this.options.syncBudgetMs),
      );
      return { id: walletId, status: "ready", simulated: false, created_at: this.clock() };
    } catch {
      return null;
    }
  }
}
