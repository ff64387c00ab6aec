// svc.v1.TransactionsService and svc.v1.SandboxTransactionsService: a user's transactions, withdrawals, and the
// sandbox deposit simulator. The ledger (src/ledger/) applies every balance change; this file validates and
// builds the transactions it opens.
import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  CancelTransactionResponseSchema,
  CompleteSandboxTransactionResponseSchema,
  CreateSandboxDepositResponseSchema,
  CreateWithdrawalResponseSchema,
  FailSandboxTransactionResponseSchema,
  GetTransactionResponseSchema,
  ListUserTransactionsResponseSchema,
  type CancelTransactionRequest,
  type CompleteSandboxTransactionRequest,
  type CreateSandboxDepositRequest,
  type CreateWithdrawalRequest,
  type FailSandboxTransactionRequest,
  type GetTransactionRequest,
  type ListUserTransactionsRequest,
  type SandboxTransactionsService,
  type TransactionsService,
} from "../../gen/svc/v1/transactions_pb.ts";
import { finishBeforeAnswer, reservationOf } from "../access/creation-reservation.ts";
import { derivedTransactionId, moveMarkOf } from "../domain/reserved-ids.ts";
import { tenantOf } from "../access/principal.ts";
import type { Clock } from "../domain/clock.ts";
import { svcError, validationError } from "../domain/errors.ts";
import { USER_ID_PATTERN } from "../domain/ids.ts";
import {
  centsOf,
  DEFAULT_COMPLETE_AFTER_SECONDS,
  DEFAULT_FAILURE_CODE,
  DESCRIPTION_MAX_LENGTH,
  failureCodeOf,
  feeCentsOf,
  fiatCurrencyOf,
  fiatMinorOf,
  MAX_COMPLETE_AFTER_SECONDS,
  newTransactionId,
  parityMinorOf,
  SANDBOX_WITHDRAWAL_PROCESSING_MS,
  TRANSACTION_STATUSES,
  TRANSACTION_TYPES,
  type TransactionType,
} from "../domain/money.ts";
import { codePointLength } from "../domain/text.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";
import type { Ledger } from "../ledger/ledger.ts";
import { transactionMessage } from "../messages/transaction-messages.ts";
import type { TransactionRecord, TransactionRepository } from "../store/transaction-repository.ts";
import type { WalletLedgerRepository } from "../store/wallet-ledger.ts";
import { listParameters, listWindow } from "./pagination.ts";
import type { TenantSettings } from "./tenant-settings.ts";

export interface TransactionsServiceDependencies {
  ledger: Ledger;
  transactions: TransactionRepository;
  wallets: WalletLedgerRepository;
  settings: TenantSettings;
  clock: Clock;
}

/** What every new transaction starts as; the ledger fills in the wallet. */
export function newTransaction(
  scope: TenantScope,
  fields: Pick<
    TransactionRecord,
    | "id"
    | "user_id"
    | "type"
    | "amount_cents"
    | "fee_cents"
    | "fiat_currency"
    | "fiat_amount_minor"
    | "fiat_exponent"
    | "description"
    | "simulated"
    | "reference"
  >,
  now: Date,
): TransactionRecord {
  return {
    ...fields,
    project_id: scope.projectId,
    livemode: scope.livemode,
    wallet_id: "",
    status: "pending",
    failure_code: null,
    failure_message: null,
    created_at: now,
    updated_at: now,
    version: 1,
  };
}

/** The fiat side of a deposit: an ISO 4217 currency (default USD) and an amount rounded to its minor unit. */
export function depositFiat(amountCents: number, currency: string | undefined, amount: number | undefined) {
  const fiat = fiatCurrencyOf(currency);
  if (amount === undefined) {
    if (fiat.currency !== "USD") throw validationError("fiat_amount", "fiat_amount is required when fiat_currency is not USD.");
    return { fiat_currency: fiat.currency, fiat_exponent: fiat.exponent, fiat_amount_minor: amountCents };
  }
  return { fiat_currency: fiat.currency, fiat_exponent: fiat.exponent, fiat_amount_minor: fiatMinorOf("fiat_amount", amount, fiat.exponent) };
}

function checkUserId(userId: string): void {
  // Unknown, malformed or of another tenant: the same 404, after validation.
  if (!USER_ID_PATTERN.test(userId)) throw svcError("user_not_found");
}

export class TransactionsServiceImpl implements ServiceImpl<typeof TransactionsService> {
  constructor(private readonly deps: TransactionsServiceDependencies) {}

  async listUserTransactions(request: ListUserTransactionsRequest, context: HandlerContext) {
    const scope = tenantOf(context);
    const parameters = listParameters(request);
    if (request.type !== undefined && !(TRANSACTION_TYPES as readonly string[]).includes(request.type)) {
      throw validationError("type", `type must be one of ${TRANSACTION_TYPES.join(", ")}.`);
    }
    if (request.status !== undefined && !(TRANSACTION_STATUSES as readonly string[]).includes(request.status)) {
      throw validationError("status", `status must be one of ${TRANSACTION_STATUSES.join(", ")}.`);
    }
    checkUserId(request.userId);
    if (!(await this.deps.wallets.find(scope, request.userId))) throw svcError("user_not_found");
    const window = await listWindow(parameters, async (id) => {
      const record = await this.deps.transactions.find(scope, id);
      return record?.user_id === request.userId ? record : null;
    });
    const page = await this.deps.transactions.list(scope, request.userId, {
      ...window,
      ...(request.type !== undefined ? { type: request.type } : {}),
      ...(request.status !== undefined ? { status: request.status } : {}),
    });
    return create(ListUserTransactionsResponseSchema, { data: page.items.map(transactionMessage), hasMore: page.hasMore });
  }

  async getTransaction(request: GetTransactionRequest, context: HandlerContext) {
    const record = await this.deps.ledger.get(tenantOf(context), request.id);
    return create(GetTransactionResponseSchema, { transaction: transactionMessage(record) });
  }

  async createWithdrawal(request: CreateWithdrawalRequest, context: HandlerContext) {
    const scope = tenantOf(context);
    const amount = centsOf("amount_usd", request.amountUsd);
    const fiat = fiatCurrencyOf(request.fiatCurrency);
    if (request.description !== undefined && codePointLength(request.description) > DESCRIPTION_MAX_LENGTH) {
      throw validationError("description", `description must be at most ${DESCRIPTION_MAX_LENGTH} characters.`);
    }
    const fee = (await this.deps.settings.project(scope.projectId))?.withdrawal_fee_cents ?? 0;
    if (fee >= amount) throw validationError("amount_usd", `amount_usd must be more than the withdrawal fee (${fee / 100}).`);
    checkUserId(request.userId);
    const now = this.deps.clock();
    const reservation = reservationOf(context);
    const record = newTransaction(
      scope,
      {
        id: reservation ? derivedTransactionId(reservation.seed, "withdrawal") : newTransactionId(),
        user_id: request.userId,
        type: "withdrawal",
        amount_cents: amount,
        fee_cents: fee,
        fiat_currency: fiat.currency,
        fiat_exponent: fiat.exponent,
        // Svc holds no exchange rates: the fiat amount is the USD amount at parity, in the currency's minor unit.
        fiat_amount_minor: parityMinorOf(amount, fiat.exponent),
        description: request.description ?? null,
        simulated: !scope.livemode,
        reference: null,
      },
      now,
    );
    const opened = await this.deps.ledger.open(scope, record, {
      // Sandbox: processing after 1 s, settled at 2 s. Live: handed to the custodian at once.
      firstStepAt: scope.livemode ? now : new Date(now.getTime() + SANDBOX_WITHDRAWAL_PROCESSING_MS),
      mayExist: reservation?.resumed ?? false,
      finish: (followUp) => finishBeforeAnswer(reservation, followUp),
    });
    return create(CreateWithdrawalResponseSchema, { transaction: transactionMessage(opened) });
  }

  async cancelTransaction(request: CancelTransactionRequest, context: HandlerContext) {
    const record = await this.deps.ledger.move(request.id, "canceled", {
      scope: tenantOf(context),
      from: ["pending"],
      onlyType: "withdrawal",
      mark: moveMarkOf(reservationOf(context), "transaction:cancel"),
    });
    return create(CancelTransactionResponseSchema, { transaction: transactionMessage(record) });
  }
}

export class SandboxTransactionsServiceImpl implements ServiceImpl<typeof SandboxTransactionsService> {
  constructor(private readonly deps: TransactionsServiceDependencies) {}

  async createSandboxDeposit(request: CreateSandboxDepositRequest, context: HandlerContext) {
    const scope = sandboxScope(context);
    const amount = centsOf("amount_usd", request.amountUsd);
    const fee = feeCentsOf(request.feeUsd, amount);
    const fiat = depositFiat(amount, request.fiatCurrency, request.fiatAmount);
    const delay = request.completeAfterSeconds ?? DEFAULT_COMPLETE_AFTER_SECONDS;
    if (!Number.isInteger(delay) || delay < 0 || delay > MAX_COMPLETE_AFTER_SECONDS) {
      throw validationError("complete_after_seconds", `complete_after_seconds must be an integer from 0 to ${MAX_COMPLETE_AFTER_SECONDS}.`);
    }
    checkUserId(request.userId);
    const now = this.deps.clock();
    const reservation = reservationOf(context);
    const record = newTransaction(
      scope,
      {
        id: reservation ? derivedTransactionId(reservation.seed, "deposit") : newTransactionId(),
        user_id: request.userId,
        type: "deposit" satisfies TransactionType,
        amount_cents: amount,
        fee_cents: fee,
        ...fiat,
        description: null,
        simulated: true,
        reference: null,
      },
      now,
    );
    const opened = await this.deps.ledger.open(scope, record, {
      firstStepAt: new Date(now.getTime() + delay * 1000),
      mayExist: reservation?.resumed ?? false,
      finish: (followUp) => finishBeforeAnswer(reservation, followUp),
    });
    return create(CreateSandboxDepositResponseSchema, { transaction: transactionMessage(opened) });
  }

  async completeSandboxTransaction(request: CompleteSandboxTransactionRequest, context: HandlerContext) {
    const record = await this.deps.ledger.move(request.id, "completed", {
      scope: sandboxScope(context),
      from: ["pending", "processing"],
      mark: moveMarkOf(reservationOf(context), "transaction:complete"),
    });
    return create(CompleteSandboxTransactionResponseSchema, { transaction: transactionMessage(record) });
  }

  async failSandboxTransaction(request: FailSandboxTransactionRequest, context: HandlerContext) {
    const code = failureCodeOf(request.failureCode ?? DEFAULT_FAILURE_CODE);
    const record = await this.deps.ledger.move(request.id, "failed", {
      scope: sandboxScope(context),
      from: ["pending", "processing"],
      failureCode: code,
      failureMessage: "Failed by the sandbox simulator.",
      mark: moveMarkOf(reservationOf(context), "transaction:fail"),
    });
    return create(FailSandboxTransactionResponseSchema, { transaction: transactionMessage(record) });
  }
}

/** The call pipeline refuses live keys on sandbox routes first; this keeps the rule true for any other caller. */
function sandboxScope(context: HandlerContext): TenantScope {
  const scope = tenantOf(context);
  if (scope.livemode) throw svcError("sandbox_only");
  return scope;
}
