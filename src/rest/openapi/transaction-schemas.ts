// Schemas of money (docs/contract.md, "Money"): the Transaction, the wallet balance, the request bodies of
// withdrawals and the sandbox simulator, and the list filters of a user's transactions.
import { REQUEST_EXAMPLES, TRANSACTION_EXAMPLES } from "../../api/transactions-api.ts";
import { USER_ID_PATTERN } from "../../domain/ids.ts";
import {
  DESCRIPTION_MAX_LENGTH,
  FAILURE_CODE_PATTERN,
  MAX_AMOUNT_CENTS,
  MAX_COMPLETE_AFTER_SECONDS,
  TRANSACTION_ID_PATTERN,
  TRANSACTION_STATUSES,
  TRANSACTION_TYPES,
} from "../../domain/money.ts";
import { closedObject, DATE_TIME, listOf, nullable, type JsonSchema } from "./json-schema.ts";

const MAX_USD = MAX_AMOUNT_CENTS / 100;
// No multipleOf: 0.01 for "at most 2 decimals": in binary floating point 19.99 / 0.01 is not a whole number, so
// validators (ajv, Prism) refuse most real amounts with it.
const USD: JsonSchema = { type: "number", minimum: 0, description: "Dollars, at most 2 decimals." };
const AMOUNT_INPUT: JsonSchema = {
  type: "number",
  // The smallest amount of 2 decimals above 0, the server's lower bound (domain/money.ts, centsOf).
  minimum: 0.01,
  maximum: MAX_USD,
  description: `Dollars: more than 0, at most ${MAX_USD.toLocaleString("en-US")}.00, at most 2 decimals (else 422 validation_error).`,
};
const CURRENCY_INPUT: JsonSchema = {
  type: "string",
  pattern: "^[A-Za-z]{3}$",
  description: "An ISO 4217 code, any case; uppercased on output. Default USD.",
};

export const TRANSACTION_PATH_IDENTIFIER = {
  schema: {
    type: "string",
    pattern: TRANSACTION_ID_PATTERN.source,
    description: "`txn_` and 24 base62 characters; any other value is 404 transaction_not_found.",
  },
  notFound: "transaction_not_found",
} as const;

export const transactionSchemas: Record<string, JsonSchema> = {
  Transaction: {
    ...closedObject(
      {
        id: { type: "string", pattern: TRANSACTION_ID_PATTERN.source },
        object: { const: "transaction" },
        user_id: { type: "string", pattern: USER_ID_PATTERN.source },
        wallet_id: { type: "string" },
        type: { type: "string", enum: [...TRANSACTION_TYPES] },
        direction: { type: "string", enum: ["in", "out"], description: "`in` for a deposit, `out` for a withdrawal." },
        amount_usd: { ...USD, description: "A deposit credits amount_usd - fee_usd; a withdrawal takes amount_usd + fee_usd." },
        fee_usd: USD,
        status: { type: "string", enum: [...TRANSACTION_STATUSES] },
        failure_code: nullable({ type: "string", description: "Set when `failed` (for example `destination_rejected`)." }),
        failure_message: nullable({ type: "string" }),
        fiat_currency: { type: "string", pattern: "^[A-Z]{3}$", description: "ISO 4217." },
        fiat_amount: { type: "number", minimum: 0, description: "In fiat_currency, rounded to its minor unit." },
        description: nullable({ type: "string", description: "The withdrawal's description, as given." }),
        livemode: { type: "boolean" },
        created_at: DATE_TIME,
        updated_at: DATE_TIME,
      },
      { description: "A deposit or a withdrawal of a user's wallet; also the `data.object` of transaction.* and withdrawal.* events." },
    ),
    examples: [TRANSACTION_EXAMPLES.withdrawalPending, TRANSACTION_EXAMPLES.depositCompleted, TRANSACTION_EXAMPLES.withdrawalFailed],
  },
  TransactionList: {
    ...listOf("Transaction", "A user's transactions."),
    examples: [
      {
        object: "list",
        url: "/v1/users/482915736/transactions",
        data: [TRANSACTION_EXAMPLES.withdrawalPending, TRANSACTION_EXAMPLES.depositCompleted],
        has_more: true,
      },
    ],
  },
  WalletBalance: {
    ...closedObject(
      {
        available_usd: { ...USD, description: "Completed deposits (net) - completed withdrawals (gross) - pending_out_usd; never negative." },
        pending_in_usd: { ...USD, description: "Pending deposits, net of their fees." },
        pending_out_usd: { ...USD, description: "Pending and processing withdrawals, fees included." },
      },
      { description: "The wallet's balance in dollars." },
    ),
    // After the examples' deposit (100.00 net) completed and their withdrawal (25.00 + 0.50) was opened.
    examples: [{ available_usd: 74.5, pending_in_usd: 0, pending_out_usd: 25.5 }],
  },
  CreateWithdrawalRequest: {
    ...closedObject(
      {
        amount_usd: AMOUNT_INPUT,
        fiat_currency: CURRENCY_INPUT,
        description: { type: "string", maxLength: DESCRIPTION_MAX_LENGTH },
      },
      { required: ["amount_usd"], description: "The fee is the project's withdrawal fee (default 0); amount_usd must be above it." },
    ),
    examples: [REQUEST_EXAMPLES.withdrawal, { amount_usd: 13.13 }, { amount_usd: 40, fiat_currency: "eur" }],
  },
  CreateSandboxDepositRequest: {
    ...closedObject(
      {
        amount_usd: AMOUNT_INPUT,
        fee_usd: { type: "number", minimum: 0, description: "Dollars, at most 2 decimals, below amount_usd; default 0." },
        fiat_currency: CURRENCY_INPUT,
        fiat_amount: {
          type: "number",
          minimum: 0,
          description: "In fiat_currency, rounded to its minor unit; required unless the currency is USD (default: amount_usd).",
        },
        complete_after_seconds: { type: "integer", minimum: 0, maximum: MAX_COMPLETE_AFTER_SECONDS, description: "Default 2." },
      },
      { required: ["amount_usd"] },
    ),
    examples: [REQUEST_EXAMPLES.sandboxDeposit, { amount_usd: 50, complete_after_seconds: 0 }],
  },
  FailSandboxTransactionRequest: {
    ...closedObject(
      { failure_code: { type: "string", pattern: FAILURE_CODE_PATTERN.source, description: "Default `simulated_failure`." } },
      { required: [] },
    ),
    examples: [REQUEST_EXAMPLES.sandboxFail, { failure_code: "insufficient_balance_at_bank" }],
  },
};

export const transactionParameterComponents: Record<string, JsonSchema> = {
  TransactionTypeFilter: {
    name: "type",
    in: "query",
    required: false,
    description: "Only transactions of this type.",
    schema: { type: "string", enum: [...TRANSACTION_TYPES] },
    example: "withdrawal",
  },
  TransactionStatusFilter: {
    name: "status",
    in: "query",
    required: false,
    description: "Only transactions with this status.",
    schema: { type: "string", enum: [...TRANSACTION_STATUSES] },
    example: "completed",
  },
};

/** Query parameters whose meaning depends on the route, by route (`GET /v1/...`) and request field. */
export const ROUTE_QUERY_PARAMETERS: Record<string, Record<string, string>> = {
  "GET /v1/users/{user_id}/transactions": { type: "TransactionTypeFilter", status: "TransactionStatusFilter" },
};
