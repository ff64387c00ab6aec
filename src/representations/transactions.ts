// The Transaction object and the wallet balance, field for field as docs/contract.md, Money, lists them:
// cents become numbers of dollars (2 decimals at most), fiat minor units numbers of the currency.
import type { Transaction, WalletBalance } from "../../gen/svc/v1/transactions_pb.ts";
import { orNull, requiredIsoTime } from "./json-values.ts";

export interface TransactionJson {
  id: string;
  object: "transaction";
  user_id: string;
  wallet_id: string;
  type: string;
  direction: string;
  amount_usd: number;
  fee_usd: number;
  status: string;
  failure_code: string | null;
  failure_message: string | null;
  fiat_currency: string;
  fiat_amount: number;
  description: string | null;
  livemode: boolean;
  created_at: string;
  updated_at: string;
}

/** Cents (Int64) as a number of dollars. */
function centsAsDollars(cents: bigint): number {
  return Number(cents) / 100;
}

export function transactionJson(t: Transaction): TransactionJson {
  return {
    id: t.id,
    object: "transaction",
    user_id: t.userId,
    wallet_id: t.walletId,
    type: t.type,
    direction: t.direction,
    amount_usd: centsAsDollars(t.amountCents),
    fee_usd: centsAsDollars(t.feeCents),
    status: t.status,
    failure_code: orNull(t.failureCode),
    failure_message: orNull(t.failureMessage),
    fiat_currency: t.fiatCurrency,
    fiat_amount: Number((Number(t.fiatAmountMinor) / 10 ** t.fiatExponent).toFixed(t.fiatExponent)),
    description: orNull(t.description),
    livemode: t.livemode,
    created_at: requiredIsoTime(t.createdAt),
    updated_at: requiredIsoTime(t.updatedAt),
  };
}

export function walletBalanceJson(balance: WalletBalance | undefined): { available_usd: number; pending_in_usd: number; pending_out_usd: number } {
  return {
    available_usd: centsAsDollars(balance?.availableCents ?? 0n),
    pending_in_usd: centsAsDollars(balance?.pendingInCents ?? 0n),
    pending_out_usd: centsAsDollars(balance?.pendingOutCents ?? 0n),
  };
}
