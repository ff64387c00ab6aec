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
  AMOUNT_FIELDS,
  DEFAULT_COMPLETE_AFTER_SECONDS,
  DEFAULT_FAILURE_CODE,
  dollars,
  DESCRIPTION_MAX_LENGTH,
  exactFiatMinorOf,
  failureCodeOf,
  feeCentsOf,
  fiatCurrencyOf,
  fiatMinorOf,
  givenCents,
  MAX_COMPLETE_AFTER_SECONDS,
  newTransactionId,
  parityMinorOf,
  SANDBOX_WITHDRAWAL_PROCESSING_MS,
  TRANSACTION_STATUSES,
  TRANSACTION_TYPES,
} from "../domain/money.ts";
import { codePointLength } from "../domain/text.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";
import type { SettlementMove } from "../domain/transaction-transitions.ts";
import type { Ledger } from "../ledger/ledger.ts";
import type { TransactionFailure } from "../ledger/ledger-writer.ts";
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

/** The fields of a new transaction its caller gives, its id aside. */
type RequestedTransaction = Pick<
  TransactionRecord,
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
>;

/**
 * What every new transaction starts as; the ledger fills in the wallet. Its fields are listed rather than spread
 * from `fields` (and the id beside them): V8 builds the one shape as a literal, where the spreads copied each
 * object property by property on every withdrawal.
 */
export function newTransaction(scope: TenantScope, id: string, fields: RequestedTransaction, now: Date): TransactionRecord {
  return {
    id,
    user_id: fields.user_id,
    type: fields.type,
    amount_cents: fields.amount_cents,
    fee_cents: fields.fee_cents,
    fiat_currency: fields.fiat_currency,
    fiat_amount_minor: fields.fiat_amount_minor,
    fiat_exponent: fields.fiat_exponent,
    description: fields.description,
    simulated: fields.simulated,
    reference: fields.reference,
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

/** The money fields of a deposit request (a sandbox deposit or a provider's), exact or deprecated. */
export interface DepositMoneyRequest {
  amountCents?: bigint | undefined;
  amountUsd: number;
  feeCents?: bigint | undefined;
  feeUsd?: number | undefined;
  fiatCurrency?: string | undefined;
  fiatAmountMinor?: bigint | undefined;
  fiatAmount?: number | undefined;
}

/**
 * Amount, fee and fiat side of a deposit: cents, and an ISO 4217 currency (default USD) with an amount in its minor
 * unit, given exactly or rounded from the deprecated number. Not given: the amount, when the currency is USD.
 */
export function depositMoney(request: DepositMoneyRequest) {
  // proto3 gives the deprecated amount no presence: 0 is "not given" (and no valid amount anyway).
  const amount = givenCents(AMOUNT_FIELDS, request.amountCents, request.amountUsd || undefined);
  const fee = feeCentsOf(request.feeCents, request.feeUsd, amount);
  const fiat = fiatCurrencyOf(request.fiatCurrency);
  let minor: number;
  if (request.fiatAmountMinor !== undefined) {
    if (request.fiatAmount !== undefined) throw validationError("fiat_amount_minor", "Give fiat_amount_minor or fiat_amount, not both.");
    minor = exactFiatMinorOf("fiat_amount_minor", request.fiatAmountMinor);
  } else if (request.fiatAmount !== undefined) {
    minor = fiatMinorOf("fiat_amount", request.fiatAmount, fiat.exponent);
  } else {
    if (fiat.currency !== "USD") throw validationError("fiat_amount", "fiat_amount is required when fiat_currency is not USD.");
    minor = amount.cents;
  }
  return { amount_cents: amount.cents, fee_cents: fee, fiat_currency: fiat.currency, fiat_exponent: fiat.exponent, fiat_amount_minor: minor };
}

/**
 * Opens the transaction a call asks for: its id derived from the call's Idempotency-Key when it has one (so a retry
 * after a crash answers the same transaction), its first step at `firstStepAt`, and its follow-up written with the
 * call's stored answer.
 */
function openRequested(
  ledger: Ledger,
  scope: TenantScope,
  context: HandlerContext,
  fields: RequestedTransaction,
  now: Date,
  firstStepAt: Date,
): Promise<TransactionRecord> {
  const reservation = reservationOf(context);
  const id = reservation ? derivedTransactionId(reservation.seed, fields.type) : newTransactionId();
  return ledger.open(scope, newTransaction(scope, id, fields, now), {
    firstStepAt,
    mayExist: reservation?.resumed ?? false,
    finish: (followUp) => finishBeforeAnswer(reservation, followUp),
  });
}

/** Makes the move a call asks for, stamped with the call's Idempotency-Key (so a resumed run answers it again). */
function moveRequested(
  ledger: Ledger,
  id: string,
  move: SettlementMove,
  scope: TenantScope,
  context: HandlerContext,
  failure?: TransactionFailure,
): Promise<TransactionRecord> {
  return ledger.move(id, move, { scope, ...(failure ? { failure } : {}), mark: moveMarkOf(reservationOf(context), `transaction:${move}`) });
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
    const amount = givenCents(AMOUNT_FIELDS, request.amountCents, request.amountUsd || undefined);
    const fiat = fiatCurrencyOf(request.fiatCurrency);
    if (request.description !== undefined && codePointLength(request.description) > DESCRIPTION_MAX_LENGTH) {
      throw validationError("description", `description must be at most ${DESCRIPTION_MAX_LENGTH} characters.`);
    }
    const fee = (await this.deps.settings.project(scope.projectId))?.withdrawal_fee_cents ?? 0;
    if (fee >= amount.cents) {
      const shown = amount.param === AMOUNT_FIELDS.cents ? `${fee} cents` : `${dollars(fee)}`;
      throw validationError(amount.param, `${amount.param} must be more than the withdrawal fee (${shown}).`);
    }
    checkUserId(request.userId);
    const now = this.deps.clock();
    const withdrawal: RequestedTransaction = {
      user_id: request.userId,
      type: "withdrawal",
      amount_cents: amount.cents,
      fee_cents: fee,
      fiat_currency: fiat.currency,
      fiat_exponent: fiat.exponent,
      // Svc holds no exchange rates: the fiat amount is the USD amount at parity, in the currency's minor unit.
      fiat_amount_minor: parityMinorOf(amount.cents, fiat.exponent),
      description: request.description ?? null,
      simulated: !scope.livemode,
      reference: null,
    };
    // Sandbox: processing after 1 s, settled at 2 s. Live: handed to the custodian at once.
    const firstStepAt = scope.livemode ? now : new Date(now.getTime() + SANDBOX_WITHDRAWAL_PROCESSING_MS);
    const opened = await openRequested(this.deps.ledger, scope, context, withdrawal, now, firstStepAt);
    return create(CreateWithdrawalResponseSchema, { transaction: transactionMessage(opened) });
  }

  async cancelTransaction(request: CancelTransactionRequest, context: HandlerContext) {
    const record = await moveRequested(this.deps.ledger, request.id, "cancel", tenantOf(context), context);
    return create(CancelTransactionResponseSchema, { transaction: transactionMessage(record) });
  }
}

export class SandboxTransactionsServiceImpl implements ServiceImpl<typeof SandboxTransactionsService> {
  constructor(private readonly deps: TransactionsServiceDependencies) {}

  async createSandboxDeposit(request: CreateSandboxDepositRequest, context: HandlerContext) {
    const scope = sandboxScope(context);
    const money = depositMoney(request);
    const delay = request.completeAfterSeconds ?? DEFAULT_COMPLETE_AFTER_SECONDS;
    if (!Number.isInteger(delay) || delay < 0 || delay > MAX_COMPLETE_AFTER_SECONDS) {
      throw validationError("complete_after_seconds", `complete_after_seconds must be an integer from 0 to ${MAX_COMPLETE_AFTER_SECONDS}.`);
    }
    checkUserId(request.userId);
    const now = this.deps.clock();
    const deposit: RequestedTransaction = { user_id: request.userId, type: "deposit", ...money, description: null, simulated: true, reference: null };
    const opened = await openRequested(this.deps.ledger, scope, context, deposit, now, new Date(now.getTime() + delay * 1000));
    return create(CreateSandboxDepositResponseSchema, { transaction: transactionMessage(opened) });
  }

  async completeSandboxTransaction(request: CompleteSandboxTransactionRequest, context: HandlerContext) {
    const record = await moveRequested(this.deps.ledger, request.id, "complete", sandboxScope(context), context);
    return create(CompleteSandboxTransactionResponseSchema, { transaction: transactionMessage(record) });
  }

  async failSandboxTransaction(request: FailSandboxTransactionRequest, context: HandlerContext) {
    const code = failureCodeOf(request.failureCode ?? DEFAULT_FAILURE_CODE);
    const record = await moveRequested(this.deps.ledger, request.id, "fail", sandboxScope(context), context, {
      code,
      message: "Failed by the sandbox simulator.",
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
