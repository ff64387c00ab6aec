// The payout hand-off of a live withdrawal: at once after its opening it is marked processing (it can no longer
// be canceled), then handed to the custodian, which is idempotent per transaction, and tried again until the
// custodian took it. Live transactions settle by AdminService.SettleTransaction, never by a step.
import type { Clock } from "../domain/clock.ts";
import { isFinal } from "../domain/transaction-transitions.ts";
import type { TransactionRecord } from "../store/transaction-repository.ts";
import type { LedgerOwner } from "../store/wallet-ledger.ts";
import type { LedgerWriter } from "./ledger-writer.ts";

/** How long a live withdrawal waits before its hand-off to the custodian is tried again. */
const PAYOUT_RETRY_MS = 30_000;
/** One hand-off's budget. */
const PAYOUT_TIMEOUT_MS = 10_000;

/** Where live withdrawals are paid out: the custodian (WalletCustodian.payOut). Idempotent per transaction id. */
export interface PayoutPort {
  payOut(
    request: { transactionId: string; userId: string; walletId: string; amountCents: number; fiatCurrency: string },
    signal: AbortSignal,
  ): Promise<void>;
}

export interface PayoutStepsDependencies {
  writer: LedgerWriter;
  payouts: PayoutPort;
  clock: Clock;
  onBackgroundError: (error: unknown) => void;
}

/** When a live transaction's hand-off is due (from its creation, so at once); null for deposits and once handed off. */
export function payoutStepDueAt(record: TransactionRecord): Date | null {
  if (isFinal(record.status) || record.type === "deposit") return null;
  return record.status === "processing" && record.handed_off ? null : record.created_at;
}

export class PayoutSteps {
  constructor(private readonly deps: PayoutStepsDependencies) {}

  /**
   * Takes a live withdrawal, as just read with its `owner`, through its hand-off: answers nothing once the
   * custodian took it, the retry time when it failed, now when the record moved on meanwhile (the next run reads it
   * again).
   */
  async take(owner: LedgerOwner, record: TransactionRecord): Promise<Date | undefined> {
    const { writer, payouts, clock, onBackgroundError } = this.deps;
    let processing = record;
    if (record.status === "pending") {
      processing = writer.moved(record, "process");
      if (!(await writer.write(owner, record, processing))) return clock();
    }
    const { id, user_id, wallet_id, amount_cents, fiat_currency } = processing;
    try {
      await payouts.payOut(
        { transactionId: id, userId: user_id, walletId: wallet_id, amountCents: amount_cents, fiatCurrency: fiat_currency },
        AbortSignal.timeout(PAYOUT_TIMEOUT_MS),
      );
    } catch (error) {
      onBackgroundError(error);
      return new Date(clock().getTime() + PAYOUT_RETRY_MS);
    }
    await writer.write(owner, processing, { ...writer.moved(processing, "hand_off"), handed_off: true });
    return undefined;
  }
}
