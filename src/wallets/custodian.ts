// The custodian that holds live wallets. Creation is idempotent per user: asking twice for the same user
// answers the same wallet, so a call that timed out on our side can be retried safely.
import { newWalletId } from "../domain/ids.ts";

export interface WalletRequest {
  userId: string;
  projectId: string;
}

export interface WalletCustodian {
  createWallet(request: WalletRequest, signal: AbortSignal): Promise<{ walletId: string }>;
}

export class CustodianUnavailableError extends Error {}

/**
 * The default custodian: it answers at once with a wallet, unless told to fail (tests and demos use this to
 * exercise retries).
 */
export class SimulatedCustodian implements WalletCustodian {
  private readonly wallets = new Map<string, string>();
  private failuresLeft = 0;
  /** How many calls were made, failed or not. */
  calls = 0;

  /** The next `count` calls fail; `Infinity` fails until told otherwise. */
  failNext(count: number): void {
    this.failuresLeft = count;
  }

  async createWallet(request: WalletRequest, signal: AbortSignal): Promise<{ walletId: string }> {
    this.calls++;
    signal.throwIfAborted();
    if (this.failuresLeft > 0) {
      this.failuresLeft--;
      throw new CustodianUnavailableError("simulated custodian failure");
    }
    let walletId = this.wallets.get(request.userId);
    if (!walletId) {
      walletId = newWalletId();
      this.wallets.set(request.userId, walletId);
    }
    return { walletId };
  }
}
