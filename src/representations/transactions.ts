// The Transaction object (docs/contract.md, Money): its schema, examples and presenter. Cents become numbers of
// dollars (2 decimals at most), fiat minor units numbers of the currency.
import type { Transaction } from "../../gen/svc/v1/transactions_pb.ts";
import { USER_ID_PATTERN } from "../domain/ids.ts";
import { TRANSACTION_ID_PATTERN, TRANSACTION_STATUSES, TRANSACTION_TYPES } from "../domain/money.ts";
import { closedObject, constant, dateTime, listOf, named, nullable, type Static, stringEnum, Type } from "./json-schema.ts";
import { centsAsDollars, jsonList, orNull, requiredIsoTime } from "./json-values.ts";
import { usd } from "./wallets.ts";

export const transactionSchema = closedObject(
  {
    id: Type.String({ pattern: TRANSACTION_ID_PATTERN.source }),
    object: constant("transaction"),
    user_id: Type.String({ pattern: USER_ID_PATTERN.source }),
    wallet_id: Type.String(),
    type: stringEnum(TRANSACTION_TYPES),
    direction: stringEnum(["in", "out"], { description: "`in` for a deposit, `out` for a withdrawal." }),
    amount_usd: usd("A deposit credits amount_usd - fee_usd; a withdrawal takes amount_usd + fee_usd."),
    fee_usd: usd(),
    status: stringEnum(TRANSACTION_STATUSES),
    failure_code: nullable(Type.String({ description: "Set when `failed` (for example `destination_rejected`)." })),
    failure_message: nullable(Type.String()),
    fiat_currency: Type.String({ pattern: "^[A-Z]{3}$", description: "ISO 4217." }),
    fiat_amount: Type.Number({ minimum: 0, description: "In fiat_currency, rounded to its minor unit." }),
    description: nullable(Type.String({ description: "The withdrawal's description, as given." })),
    livemode: Type.Boolean(),
    created_at: dateTime(),
    updated_at: dateTime(),
  },
  { description: "A deposit or a withdrawal of a user's wallet; also the `data.object` of transaction.* and withdrawal.* events." },
);
export type TransactionJson = Static<typeof transactionSchema>;

/** A sandbox user's transaction as the API answers it: the examples of the money schemas and operations. */
function exampleTransaction(fields: Partial<TransactionJson> & Pick<TransactionJson, "id" | "type" | "status">): TransactionJson {
  const deposit = fields.type === "deposit";
  return {
    object: "transaction",
    user_id: "482915736",
    wallet_id: "wal_7Qm2Xk9PzR4tLw8NcVb3Hs6D",
    direction: deposit ? "in" : "out",
    amount_usd: deposit ? 100.5 : 25,
    fee_usd: 0.5,
    failure_code: null,
    failure_message: null,
    fiat_currency: deposit ? "EUR" : "USD",
    fiat_amount: deposit ? 92.35 : 25,
    description: deposit ? null : "Payout to bank account",
    livemode: false,
    created_at: deposit ? "2026-11-20T10:00:00.000Z" : "2026-11-20T10:05:00.000Z",
    updated_at: deposit ? "2026-11-20T10:00:00.000Z" : "2026-11-20T10:05:00.000Z",
    ...fields,
  };
}

const DEPOSIT_ID = "txn_4eC39HqLyjWDarjtT1zdp7dc";
const WITHDRAWAL_ID = "txn_9Lm2Vb7XcQ1wRt5YpK8sN3dF";
/** Transactions in the states the money operations end in. */
export const TRANSACTION_EXAMPLES = {
  depositPending: exampleTransaction({ id: DEPOSIT_ID, type: "deposit", status: "pending" }),
  depositCompleted: exampleTransaction({ id: DEPOSIT_ID, type: "deposit", status: "completed", updated_at: "2026-11-20T10:00:02.000Z" }),
  depositFailed: exampleTransaction({
    id: DEPOSIT_ID,
    type: "deposit",
    status: "failed",
    failure_code: "simulated_failure",
    failure_message: "Failed by the sandbox simulator.",
    updated_at: "2026-11-20T10:00:01.000Z",
  }),
  withdrawalPending: exampleTransaction({ id: WITHDRAWAL_ID, type: "withdrawal", status: "pending" }),
  withdrawalCompleted: exampleTransaction({ id: WITHDRAWAL_ID, type: "withdrawal", status: "completed", updated_at: "2026-11-20T10:05:02.000Z" }),
  withdrawalFailed: exampleTransaction({
    id: "txn_2Hs8Kd4Qw7Zx1Cv5Bn9Mr3Tj",
    type: "withdrawal",
    status: "failed",
    amount_usd: 13.13,
    fiat_amount: 13.13,
    description: null,
    failure_code: "destination_rejected",
    failure_message: "The destination rejected the payout.",
    updated_at: "2026-11-20T10:05:02.000Z",
  }),
  withdrawalCanceled: exampleTransaction({ id: WITHDRAWAL_ID, type: "withdrawal", status: "canceled", updated_at: "2026-11-20T10:05:00.400Z" }),
};
named("Transaction", transactionSchema, [
  TRANSACTION_EXAMPLES.withdrawalPending,
  TRANSACTION_EXAMPLES.depositCompleted,
  TRANSACTION_EXAMPLES.withdrawalFailed,
]);

const TRANSACTIONS_PATH = "/v1/users/482915736/transactions";
export const transactionListSchema = listOf(transactionSchema, "A user's transactions.");
named("TransactionList", transactionListSchema, [
  jsonList(TRANSACTIONS_PATH, [TRANSACTION_EXAMPLES.withdrawalPending, TRANSACTION_EXAMPLES.depositCompleted], true),
]);
/** A list of settled transactions: the example of listing them. */
export const SETTLED_TRANSACTIONS_EXAMPLE = jsonList(
  TRANSACTIONS_PATH,
  [TRANSACTION_EXAMPLES.withdrawalCompleted, TRANSACTION_EXAMPLES.depositCompleted],
  false,
);

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
