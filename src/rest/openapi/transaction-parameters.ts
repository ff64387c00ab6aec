// Parameters of money routes: the transaction id of a path, and the list filters of a user's transactions.
import { TRANSACTION_ID_PATTERN, TRANSACTION_STATUSES, TRANSACTION_TYPES } from "../../domain/money.ts";
import type { JsonSchema } from "../../representations/json-schema.ts";

export const TRANSACTION_PATH_IDENTIFIER = {
  schema: {
    type: "string",
    pattern: TRANSACTION_ID_PATTERN.source,
    description: "`txn_` and 24 base62 characters; any other value is 404 transaction_not_found.",
  },
  notFound: "transaction_not_found",
} as const;

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
