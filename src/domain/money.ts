// Money rules (docs/contract.md, Money): amounts are integer cents; dollars come in as JSON numbers with at
// most 2 decimals; fiat amounts are kept in their currency's minor unit, rounded on the decimal digits of the
// number as written (its shortest representation), never on binary floats. Pure functions, no I/O.
import { decimalOfNumber, decimalPlaces, roundHalfAwayFromZero } from "./decimal.ts";
import { validationError } from "./errors.ts";
import { randomBase62 } from "./random.ts";

/** 1,000,000.00 dollars: the largest amount of one transaction. */
export const MAX_AMOUNT_CENTS = 100_000_000;
/** The delay of a simulated deposit's completion when none is given, and the largest one. */
export const DEFAULT_COMPLETE_AFTER_SECONDS = 2;
export const MAX_COMPLETE_AFTER_SECONDS = 3600;
/** Sandbox withdrawals: `processing` after 1 s, settled 2 s after creation; exactly 13.13 fails. */
export const SANDBOX_WITHDRAWAL_PROCESSING_MS = 1000;
export const SANDBOX_WITHDRAWAL_SETTLE_MS = 2000;
export const SANDBOX_FAILING_WITHDRAWAL_CENTS = 1313;
export const SANDBOX_WITHDRAWAL_FAILURE_CODE = "destination_rejected";
export const DEFAULT_FAILURE_CODE = "simulated_failure";
export const FAILURE_CODE_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;
export const DESCRIPTION_MAX_LENGTH = 500;

export const TRANSACTION_TYPES = ["deposit", "withdrawal"] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];
export const TRANSACTION_STATUSES = ["pending", "processing", "completed", "failed", "canceled"] as const;
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];
export const FINAL_STATUSES: readonly TransactionStatus[] = ["completed", "failed", "canceled"];

export const TRANSACTION_ID_PATTERN = /^txn_[A-Za-z0-9]{24}$/;

export function newTransactionId(): string {
  return `txn_${randomBase62(24)}`;
}

/**
 * Dollars as sent (a JSON number) to cents: at most 2 decimals, else 422 naming `param`. `min` is the smallest
 * accepted value in cents (1 for amounts, 0 for fees).
 */
export function centsOf(param: string, value: number, options: CentsRange = { min: 1 }): number {
  if (!Number.isFinite(value)) throw validationError(param, `${param} must be a number.`);
  const decimal = decimalOfNumber(value);
  if (decimalPlaces(decimal) > 2) throw validationError(param, `${param} must have at most 2 decimals.`);
  return centsInRange(param, Number(roundHalfAwayFromZero(decimal, 2, 20) ?? Number.POSITIVE_INFINITY), options);
}

/** The bounds of an amount in cents: `min` is 1 for amounts, 0 for fees; `max` defaults to MAX_AMOUNT_CENTS. */
export interface CentsRange {
  min: number;
  max?: number;
}

/** A cents value within its bounds, else 422 naming `param` (its limit written in the unit of the field). */
function centsInRange(param: string, cents: number, options: CentsRange): number {
  const max = options.max ?? MAX_AMOUNT_CENTS;
  if (cents < options.min) throw validationError(param, options.min > 0 ? `${param} must be greater than 0.` : `${param} must not be negative.`);
  if (cents > max) {
    const limit = param.endsWith("_cents") ? `${max} (${dollars(max)} dollars)` : `${dollars(max)}`;
    throw validationError(param, `${param} must be at most ${limit}.`);
  }
  return cents;
}

/** The two fields of one amount in a request message: the exact one (int64 cents) and the deprecated dollars. */
export interface AmountFields {
  cents: string;
  usd: string;
}

export const AMOUNT_FIELDS: AmountFields = { cents: "amount_cents", usd: "amount_usd" };
export const FEE_FIELDS: AmountFields = { cents: "fee_cents", usd: "fee_usd" };
export const WITHDRAWAL_FEE_FIELDS: AmountFields = { cents: "withdrawal_fee_cents", usd: "withdrawal_fee_usd" };

/** An amount in cents and the request field it came in, which every refusal about it names. */
export interface GivenCents {
  cents: number;
  param: string;
}

/**
 * An amount a request gives exactly (`exact`, int64 cents) or in its deprecated dollars field (`usd`, a binary float
 * read on its shortest decimal form, at most 2 decimals). Both given: 422 on the exact field, since they could
 * disagree. Neither: the dollars field's refusal, as the REST API (whose member it is) has always answered.
 */
export function givenCents(fields: AmountFields, exact: bigint | undefined, usd: number | undefined, options: CentsRange = { min: 1 }): GivenCents {
  if (exact === undefined) return { cents: centsOf(fields.usd, usd ?? 0, options), param: fields.usd };
  if (usd !== undefined) throw validationError(fields.cents, `Give ${fields.cents} or ${fields.usd}, not both.`);
  // Beyond Number's exact integers a value is out of range anyway: it stays an infinity of its sign.
  const cents = exact > BigInt(Number.MAX_SAFE_INTEGER) ? Number.POSITIVE_INFINITY : exact < 0n ? Number.NEGATIVE_INFINITY : Number(exact);
  return { cents: centsInRange(fields.cents, cents, options), param: fields.cents };
}

/** Cents as the API's number of dollars (2 decimals at most). */
export function dollars(cents: number): number {
  return cents / 100;
}

/** The number of decimals of an ISO 4217 currency (from the runtime's CLDR data), or null for an unknown code. */
export function currencyExponent(code: string): number | null {
  if (!/^[A-Z]{3}$/.test(code) || !SUPPORTED_CURRENCIES.has(code)) return null;
  let exponent = EXPONENTS.get(code);
  if (exponent === undefined) {
    // Building a NumberFormat costs more than the rest of a request: once per currency.
    exponent = new Intl.NumberFormat("en", { style: "currency", currency: code }).resolvedOptions().maximumFractionDigits ?? 2;
    EXPONENTS.set(code, exponent);
  }
  return exponent;
}

const SUPPORTED_CURRENCIES = new Set(Intl.supportedValuesOf("currency"));
const EXPONENTS = new Map<string, number>();

/**
 * An ISO 4217 code in any case, uppercased; default USD. Three ASCII letters before uppercasing: toUpperCase()
 * folds some other letters onto ASCII ("ſ" -> "S", "ı" -> "I"), which would read "uſd" as USD.
 */
export function fiatCurrencyOf(value: string | undefined): { currency: string; exponent: number } {
  const given = value ?? "USD";
  const currency = /^[A-Za-z]{3}$/.test(given) ? given.toUpperCase() : "";
  const exponent = currencyExponent(currency);
  if (exponent === null) throw validationError("fiat_currency", "fiat_currency must be an ISO 4217 currency code.");
  return { currency, exponent };
}

/** The largest fiat amount in minor units (within Number's exact integers). */
const MAX_FIAT_MINOR = 10n ** 15n;

/**
 * A fiat amount rounded to its currency's minor unit (half away from zero), in minor units. The rounding is done
 * on the decimal digits of the number's shortest representation: 1.005 USD is 101 cents, 2.5 JPY is 3 yen.
 */
export function fiatMinorOf(param: string, value: number, exponent: number): number {
  if (!Number.isFinite(value) || value < 0) throw validationError(param, `${param} must be a number, 0 or more.`);
  const minor = roundHalfAwayFromZero(decimalOfNumber(value), exponent, 16);
  if (minor === null || minor > MAX_FIAT_MINOR) throw validationError(param, `${param} is too large.`);
  return Number(minor);
}

/** A fiat amount given exactly in its currency's minor unit: 0 to 10^15, else 422 naming `param`. */
export function exactFiatMinorOf(param: string, minor: bigint): number {
  if (minor < 0n || minor > MAX_FIAT_MINOR) throw validationError(param, `${param} must be 0 to ${MAX_FIAT_MINOR} (minor units).`);
  return Number(minor);
}

/** Cents of USD at parity in a currency's minor unit, rounded half away from zero on decimal digits. */
export function parityMinorOf(cents: number, exponent: number): number {
  return Number(roundHalfAwayFromZero(decimalOfNumber(cents), exponent - 2, 20) ?? Number.NaN);
}

export function fiatAmount(minor: number, exponent: number): number {
  return Number((minor / 10 ** exponent).toFixed(exponent));
}

/**
 * A failed transaction's `failure_code` as given: 1 to 64 lowercase letters, digits and underscores, starting with
 * a letter (FAILURE_CODE_PATTERN), else 422 on `failure_code`.
 */
export function failureCodeOf(code: string): string {
  if (!FAILURE_CODE_PATTERN.test(code)) {
    throw validationError("failure_code", "failure_code must be 1 to 64 lowercase letters, digits and underscores, starting with a letter.");
  }
  return code;
}

/** The fee of a deposit, given exactly or in deprecated dollars: default 0, and below the amount. */
export function feeCentsOf(exact: bigint | undefined, usd: number | undefined, amount: GivenCents): number {
  if (exact === undefined && usd === undefined) return 0;
  const fee = givenCents(FEE_FIELDS, exact, usd, { min: 0 });
  if (fee.cents >= amount.cents) throw validationError(fee.param, `${fee.param} must be below ${amount.param}.`);
  return fee.cents;
}
