// The custodian that holds live wallets. Creation is idempotent per user: asking twice for the same user
// answers the same wallet, so a call that timed out on our side can be retried safely.
import { newWalletId } from "../domain/ids.ts";

export interface WalletRequest {
  userId: string;
  projectId: string;
}

/** A live withdrawal to pay out; the custodian treats a repeated transaction id as the same payout. */
export interface PayoutRequest {
  transactionId: string;
  userId: string;
  walletId: string;
  amountCents: number;
  fiatCurrency: string;
}

export interface WalletCustodian {
  createWallet(request: WalletRequest, signal: AbortSignal): Promise<{ walletId: string }>;
  /**
   * Takes a withdrawal to pay out; its outcome comes back later through AdminService.SettleTransaction.
   * Idempotent per transaction id, so a hand-off that timed out on our side can be retried. A custodian
   * without it (older test doubles) takes every payout at once.
   */
  payOut?(request: PayoutRequest, signal: AbortSignal): Promise<void>;
}

class CustodianUnavailableError extends Error {}

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

  /** Payouts taken, by transaction id. */
  readonly payouts = new Map<string, PayoutRequest>();

  async payOut(request: PayoutRequest, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    this.payouts.set(request.transactionId, request);
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
