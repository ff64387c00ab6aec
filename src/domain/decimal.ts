// Decimal literals, and rounding on their decimal digits. A decimal literal is JSON's number grammar and nothing
// around it: an optional minus, digits without leading zeros (or 0), an optional fraction, an optional exponent.
// Number() and BigInt() read far more ("0x10", "0b11", "0o7", " 5", "+5", ".5", "5."), and rounding
// `value * 10 ** n` rounds the binary float, not the number as written (1.005 * 100 is 100.49999999999999).
// Pure functions, no I/O.

const DECIMAL_LITERAL = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;
const PLAIN_DECIMAL_LITERAL = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$/;
/** Beyond this an exponent only says "far too large" or "far too small"; kept finite so arithmetic on it stays exact. */
const EXPONENT_LIMIT = 1_000_000_000;

/**
 * A decimal number as its digits: (-1 if negative) × coefficient × 10^exponent. The coefficient has neither leading
 * nor trailing zeros; zero is coefficient "0", exponent 0, not negative.
 */
export interface Decimal {
  readonly negative: boolean;
  readonly coefficient: string;
  readonly exponent: number;
}

export interface DecimalLiteralOptions {
  /** Whether an exponent (`1e2`, `1.5E-3`) is accepted; default true. */
  exponent?: boolean;
}

/** Whether `text` is exactly a decimal literal (no whitespace around it). */
export function isDecimalLiteral(text: string, options: DecimalLiteralOptions = {}): boolean {
  return (options.exponent === false ? PLAIN_DECIMAL_LITERAL : DECIMAL_LITERAL).test(text);
}

/** The digits of a decimal literal, or null when `text` is not one. */
export function parseDecimalLiteral(text: string, options: DecimalLiteralOptions = {}): Decimal | null {
  return isDecimalLiteral(text, options) ? digitsOf(text) : null;
}

/**
 * The number a decimal literal writes (Number() of it, which reads a literal exactly as JSON.parse does), or null
 * when `text` is not one, or with `integer` not a whole number.
 */
export function decimalLiteralValue(text: string, options: DecimalLiteralOptions & { integer?: boolean } = {}): number | null {
  const decimal = parseDecimalLiteral(text, options);
  if (!decimal || (options.integer === true && !isIntegral(decimal))) return null;
  return Number(text);
}

/** The digits of a finite number as its shortest decimal representation (String(value): `1.005`, `1e-7`, `1.5e+21`). */
export function decimalOfNumber(value: number): Decimal {
  if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`);
  return digitsOf(String(value));
}

/** Reads a text already known to be a decimal literal (or String() of a finite number). */
function digitsOf(text: string): Decimal {
  const negative = text.startsWith("-");
  const unsigned = negative ? text.slice(1) : text;
  const e = unsigned.search(/[eE]/);
  const mantissa = e < 0 ? unsigned : unsigned.slice(0, e);
  const written = e < 0 ? 0 : Number(unsigned.slice(e + 1));
  const point = mantissa.indexOf(".");
  const fraction = point < 0 ? "" : mantissa.slice(point + 1);
  const all = (point < 0 ? mantissa : mantissa.slice(0, point)) + fraction;
  const coefficient = all.replace(/^0+/, "").replace(/0+$/, "");
  if (coefficient === "") return { negative: false, coefficient: "0", exponent: 0 };
  const trailingZeros = all.length - all.replace(/0+$/, "").length;
  const clamped = Math.max(-EXPONENT_LIMIT, Math.min(EXPONENT_LIMIT, written));
  return { negative, coefficient, exponent: clamped - fraction.length + trailingZeros };
}

/** Whether the number is a whole number. */
export function isIntegral(decimal: Decimal): boolean {
  return decimal.exponent >= 0;
}

/** The number of decimals the number needs (0 for a whole number). */
export function decimalPlaces(decimal: Decimal): number {
  return Math.max(0, -decimal.exponent);
}

/**
 * The number × 10^`decimals` rounded half away from zero to a whole number, on its decimal digits; null when the
 * result would have more than `maxDigits` digits (a number that large is refused by every caller anyway).
 */
export function roundHalfAwayFromZero(decimal: Decimal, decimals: number, maxDigits = 40): bigint | null {
  if (decimal.coefficient === "0") return 0n;
  const { coefficient } = decimal;
  const shift = decimal.exponent + decimals;
  let magnitude: bigint;
  if (shift >= 0) {
    if (coefficient.length + shift > maxDigits) return null;
    magnitude = BigInt(coefficient + "0".repeat(shift));
  } else {
    // Keep the digits left of the unit; the first digit dropped decides: 5 or more rounds the magnitude up (the
    // coefficient has no trailing zeros, so a dropped 5 is either exactly half or more than half).
    const kept = coefficient.length + shift;
    if (kept > maxDigits) return null;
    const firstDropped = kept >= 0 ? coefficient[kept]! : "0";
    magnitude = (kept > 0 ? BigInt(coefficient.slice(0, kept)) : 0n) + (firstDropped >= "5" ? 1n : 0n);
    if (magnitude.toString().length > maxDigits) return null;
  }
  return decimal.negative ? -magnitude : magnitude;
}
