// The REST surface of svc.v1.TransactionsService and svc.v1.SandboxTransactionsService.
import { SandboxTransactionsService, TransactionsService } from "../../gen/svc/v1/transactions_pb.ts";
import { MAX_COMPLETE_AFTER_SECONDS } from "../domain/money.ts";
import { jsonList } from "../representations/json-values.ts";
import {
  createSandboxDepositRequestSchema,
  createWithdrawalRequestSchema,
  failSandboxTransactionRequestSchema,
  REQUEST_EXAMPLES,
} from "../representations/transaction-requests.ts";
import {
  SETTLED_TRANSACTIONS_EXAMPLE,
  TRANSACTION_EXAMPLES,
  transactionJson,
  transactionListSchema,
  transactionSchema,
} from "../representations/transactions.ts";
import { describeService } from "./method-description.ts";

const TAG = "Transactions";
const SANDBOX_TAG = "Sandbox";

/** The checks of a money movement after validation, in order. */
const MOVEMENT_CHECKS =
  "Checks in order: 422 validation_error, 404 user_not_found, 409 user_suspended, kyc_required (kyc_status must be approved), wallet_not_ready";

export const transactionsApi = describeService(TransactionsService, {
  listUserTransactions: {
    status: 200,
    present: (r, path) => jsonList(path, r.data.map(transactionJson), r.hasMore),
    operation: {
      summary: "List a user's transactions",
      description: "Newest first; filters `type` (deposit, withdrawal) and `status`.",
      tag: TAG,
      success: {
        schema: transactionListSchema,
        description: "The user's transactions, newest first.",
        example: SETTLED_TRANSACTIONS_EXAMPLE,
      },
    },
  },
  getTransaction: {
    status: 200,
    present: (r) => transactionJson(r.transaction!),
    operation: {
      summary: "Retrieve a transaction",
      description: "A deposit or withdrawal of one of the key's users, in its current state; `failure_code` and `failure_message` once `failed`.",
      tag: TAG,
      success: { schema: transactionSchema, description: "The transaction.", example: TRANSACTION_EXAMPLES.depositCompleted },
    },
  },
  createWithdrawal: {
    status: 201,
    present: (r) => transactionJson(r.transaction!),
    operation: {
      summary: "Withdraw from a user's wallet",
      description:
        `Holds amount_usd plus the project's withdrawal fee (fee_usd) in pending_out at once; \`pending\`, then \`processing\`, then \`completed\` (emits transaction.completed and withdrawal.completed) or \`failed\` (withdrawal.failed, the hold is released). ${MOVEMENT_CHECKS}, insufficient_funds (available_usd below amount_usd + fee_usd). ` +
        "In sandbox a withdrawal is processing after 1 s and settled after 2 s; an amount_usd of exactly 13.13 fails with failure_code destination_rejected.",
      tag: TAG,
      success: { schema: transactionSchema, description: "The withdrawal, `pending`.", example: TRANSACTION_EXAMPLES.withdrawalPending },
      requestBody: { schema: createWithdrawalRequestSchema, required: true, example: REQUEST_EXAMPLES.withdrawal },
      errors: ["user_suspended", "kyc_required", "wallet_not_ready", "insufficient_funds"],
    },
    rpcOnlyFields: ["amount_cents"],
  },
  cancelTransaction: {
    status: 200,
    present: (r) => transactionJson(r.transaction!),
    operation: {
      summary: "Cancel a pending withdrawal",
      description: "Only while the withdrawal is `pending` (else 409 invalid_state); its hold goes back to available_usd.",
      tag: TAG,
      success: { schema: transactionSchema, description: "The withdrawal, `canceled`.", example: TRANSACTION_EXAMPLES.withdrawalCanceled },
      errors: ["invalid_state"],
    },
  },
});

export const sandboxTransactionsApi = describeService(SandboxTransactionsService, {
  createSandboxDeposit: {
    status: 201,
    present: (r) => transactionJson(r.transaction!),
    sandboxOnly: true,
    operation: {
      summary: "Simulate a deposit",
      description: `Sandbox keys only. Credits amount_usd - fee_usd to pending_in_usd and emits transaction.received; a job completes it after complete_after_seconds (0 to ${MAX_COMPLETE_AFTER_SECONDS}, default 2): available_usd, transaction.completed. ${MOVEMENT_CHECKS}.`,
      tag: SANDBOX_TAG,
      success: { schema: transactionSchema, description: "The deposit, `pending`.", example: TRANSACTION_EXAMPLES.depositPending },
      requestBody: { schema: createSandboxDepositRequestSchema, required: true, example: REQUEST_EXAMPLES.sandboxDeposit },
      errors: ["user_suspended", "kyc_required", "wallet_not_ready"],
    },
    rpcOnlyFields: ["amount_cents", "fee_cents", "fiat_amount_minor"],
  },
  completeSandboxTransaction: {
    status: 200,
    present: (r) => transactionJson(r.transaction!),
    sandboxOnly: true,
    operation: {
      summary: "Complete a sandbox transaction now",
      description: "Sandbox keys only. From `pending` or `processing` (else 409 invalid_state); emits the completion events.",
      tag: SANDBOX_TAG,
      success: { schema: transactionSchema, description: "The transaction, `completed`.", example: TRANSACTION_EXAMPLES.depositCompleted },
      errors: ["invalid_state"],
    },
  },
  failSandboxTransaction: {
    status: 200,
    present: (r) => transactionJson(r.transaction!),
    sandboxOnly: true,
    operation: {
      summary: "Fail a sandbox transaction now",
      description:
        "Sandbox keys only. From `pending` or `processing` (else 409 invalid_state); a withdrawal's hold is released and withdrawal.failed emitted.",
      tag: SANDBOX_TAG,
      success: { schema: transactionSchema, description: "The transaction, `failed`.", example: TRANSACTION_EXAMPLES.depositFailed },
      requestBody: { schema: failSandboxTransactionRequestSchema, required: false, example: REQUEST_EXAMPLES.sandboxFail },
      errors: ["invalid_state"],
    },
  },
});
