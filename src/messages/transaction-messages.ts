// Stored transactions and wallet balances as the public messages.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { TransactionSchema, WalletBalanceSchema, type Transaction, type WalletBalance } from "../../gen/svc/v1/transactions_pb.ts";
import { transactionJson, type TransactionJson } from "../representations/transactions.ts";
import type { TransactionRecord } from "../store/transaction-repository.ts";
import type { LedgerState } from "../store/wallet-ledger.ts";

export function transactionMessage(record: TransactionRecord): Transaction {
  return create(TransactionSchema, {
    id: record.id,
    userId: record.user_id,
    walletId: record.wallet_id,
    type: record.type,
    direction: record.type === "deposit" ? "in" : "out",
    amountCents: BigInt(record.amount_cents),
    feeCents: BigInt(record.fee_cents),
    status: record.status,
    ...(record.failure_code !== null ? { failureCode: record.failure_code } : {}),
    ...(record.failure_message !== null ? { failureMessage: record.failure_message } : {}),
    fiatCurrency: record.fiat_currency,
    fiatAmountMinor: BigInt(record.fiat_amount_minor),
    fiatExponent: record.fiat_exponent,
    livemode: record.livemode,
    ...(record.description !== null ? { description: record.description } : {}),
    createdAt: timestampFromDate(record.created_at),
    updatedAt: timestampFromDate(record.updated_at),
  });
}

/** The Transaction as events carry it in `data.object`: exactly what GET /v1/transactions/{id} answers at that state. */
export function transactionEventObject(record: TransactionRecord): TransactionJson {
  return transactionJson(transactionMessage(record));
}

export function walletBalanceMessage(ledger: LedgerState): WalletBalance {
  return create(WalletBalanceSchema, {
    availableCents: BigInt(ledger.available_cents),
    pendingInCents: BigInt(ledger.pending_in_cents),
    pendingOutCents: BigInt(ledger.pending_out_cents),
  });
}
