// The request bodies of money: withdrawals and the sandbox simulator, with the bounds the server applies.
import { DESCRIPTION_MAX_LENGTH, FAILURE_CODE_PATTERN, MAX_AMOUNT_CENTS, MAX_COMPLETE_AFTER_SECONDS } from "../domain/money.ts";
import { closedObject, named, type Static, Type } from "./json-schema.ts";

const MAX_USD = MAX_AMOUNT_CENTS / 100;
const amountInput = () =>
  Type.Number({
    // The smallest amount of 2 decimals above 0, the server's lower bound (domain/money.ts, centsOf).
    minimum: 0.01,
    maximum: MAX_USD,
    description: `Dollars: more than 0, at most ${MAX_USD.toLocaleString("en-US")}.00, at most 2 decimals (else 422 validation_error).`,
  });
const currencyInput = () => Type.String({ pattern: "^[A-Za-z]{3}$", description: "An ISO 4217 code, any case; uppercased on output. Default USD." });

export const createWithdrawalRequestSchema = closedObject(
  {
    amount_usd: amountInput(),
    fiat_currency: Type.Optional(currencyInput()),
    description: Type.Optional(Type.String({ maxLength: DESCRIPTION_MAX_LENGTH })),
  },
  { description: "The fee is the project's withdrawal fee (default 0); amount_usd must be above it." },
);

export const createSandboxDepositRequestSchema = closedObject({
  amount_usd: amountInput(),
  fee_usd: Type.Optional(Type.Number({ minimum: 0, description: "Dollars, at most 2 decimals, below amount_usd; default 0." })),
  fiat_currency: Type.Optional(currencyInput()),
  fiat_amount: Type.Optional(
    Type.Number({
      minimum: 0,
      description: "In fiat_currency, rounded to its minor unit; required unless the currency is USD (default: amount_usd).",
    }),
  ),
  complete_after_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_COMPLETE_AFTER_SECONDS, description: "Default 2." })),
});

export const failSandboxTransactionRequestSchema = closedObject({
  failure_code: Type.Optional(Type.String({ pattern: FAILURE_CODE_PATTERN.source, description: "Default `simulated_failure`." })),
});

/** The bodies the money operations show. */
export const REQUEST_EXAMPLES = {
  withdrawal: { amount_usd: 25, description: "Payout to bank account" } satisfies Static<typeof createWithdrawalRequestSchema>,
  sandboxDeposit: {
    amount_usd: 100.5,
    fee_usd: 0.5,
    fiat_currency: "EUR",
    fiat_amount: 92.345,
    complete_after_seconds: 2,
  } satisfies Static<typeof createSandboxDepositRequestSchema>,
  sandboxFail: { failure_code: "simulated_failure" } satisfies Static<typeof failSandboxTransactionRequestSchema>,
};

named("CreateWithdrawalRequest", createWithdrawalRequestSchema, [
  REQUEST_EXAMPLES.withdrawal,
  { amount_usd: 13.13 },
  { amount_usd: 40, fiat_currency: "eur" },
]);
named("CreateSandboxDepositRequest", createSandboxDepositRequestSchema, [
  REQUEST_EXAMPLES.sandboxDeposit,
  { amount_usd: 50, complete_after_seconds: 0 },
]);
named("FailSandboxTransactionRequest", failSandboxTransactionRequestSchema, [
  REQUEST_EXAMPLES.sandboxFail,
  { failure_code: "insufficient_balance_at_bank" },
]);
