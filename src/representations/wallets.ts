// The Wallet object and its balance (docs/contract.md, Resources and Money): schemas, examples and presenters.
// Cents become numbers of dollars (2 decimals at most).
import type { WalletBalance } from "../../gen/svc/v1/transactions_pb.ts";
import type { Wallet } from "../../gen/svc/v1/users_pb.ts";
import { USER_ID_PATTERN } from "../domain/ids.ts";
import { CREATED_AT, UPDATED_AT, USER_ID } from "./example-values.ts";
import { closedObject, constant, dateTime, exampleList, listOf, named, type Static, stringEnum, Type } from "./json-schema.ts";
import { centsAsDollars, requiredIsoTime } from "./json-values.ts";

// No multipleOf: 0.01 for "at most 2 decimals": in binary floating point 19.99 / 0.01 is not a whole number, so
// validators (ajv, Prism) refuse most real amounts with it.
export function usd(description = "Dollars, at most 2 decimals.") {
  return Type.Number({ minimum: 0, description });
}

export const walletBalanceSchema = closedObject(
  {
    available_usd: usd("Completed deposits (net) - completed withdrawals (gross) - pending_out_usd; never negative."),
    pending_in_usd: usd("Pending deposits, net of their fees."),
    pending_out_usd: usd("Pending and processing withdrawals, fees included."),
  },
  { description: "The wallet's balance in dollars." },
);
// After the transaction examples' deposit (100.00 net) completed and their withdrawal (25.00 + 0.50) was opened.
named("WalletBalance", walletBalanceSchema, [{ available_usd: 74.5, pending_in_usd: 0, pending_out_usd: 25.5 }]);

export const walletSchema = closedObject({
  id: Type.String(),
  object: constant("wallet"),
  user_id: Type.String({ pattern: USER_ID_PATTERN.source }),
  status: stringEnum(["pending", "ready", "failed"]),
  simulated: Type.Boolean({ description: "true for the simulated wallets of sandbox users." }),
  currency: constant("usd"),
  balance: walletBalanceSchema,
  livemode: Type.Boolean(),
  created_at: dateTime(),
  updated_at: dateTime("The last change of the wallet or its balance."),
});

const WALLET_EXAMPLE: Static<typeof walletSchema> = {
  id: "wal_9KcT3nVb7QmX2rLw5ZpD8sHf",
  object: "wallet",
  user_id: USER_ID,
  status: "ready",
  simulated: true,
  currency: "usd",
  balance: { available_usd: 120.5, pending_in_usd: 25, pending_out_usd: 0 },
  livemode: false,
  created_at: CREATED_AT,
  updated_at: UPDATED_AT,
};
named("Wallet", walletSchema, [WALLET_EXAMPLE]);

export const walletListSchema = listOf(walletSchema, "The wallets of a user.");
named("WalletList", walletListSchema, [exampleList(`/v1/users/${USER_ID}/wallets`, [WALLET_EXAMPLE])]);

export function walletBalanceJson(balance: WalletBalance | undefined): Static<typeof walletBalanceSchema> {
  return {
    available_usd: centsAsDollars(balance?.availableCents ?? 0n),
    pending_in_usd: centsAsDollars(balance?.pendingInCents ?? 0n),
    pending_out_usd: centsAsDollars(balance?.pendingOutCents ?? 0n),
  };
}

export function walletJson(wallet: Wallet): Static<typeof walletSchema> {
  return {
    id: wallet.id,
    object: "wallet",
    user_id: wallet.userId,
    status: wallet.status,
    simulated: wallet.simulated,
    currency: "usd",
    balance: walletBalanceJson(wallet.balance),
    livemode: wallet.livemode,
    created_at: requiredIsoTime(wallet.createdAt),
    updated_at: requiredIsoTime(wallet.updatedAt ?? wallet.createdAt),
  };
}
