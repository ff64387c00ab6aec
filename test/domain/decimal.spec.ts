// Decimal literals and rounding on decimal digits (src/domain/decimal.ts), and the money rules built on them
// (src/domain/money.ts): fiat amounts rounded half away from zero in the currency's minor unit on the number as
// written, never on its binary float; currency codes of three ASCII letters before any case folding.
import { expect } from "chai";
import {
  decimalOfNumber,
  decimalPlaces,
  isDecimalLiteral,
  isIntegral,
  parseDecimalLiteral,
  roundHalfAwayFromZero,
} from "../../src/domain/decimal.ts";
import { centsOf, currencyExponent, fiatCurrencyOf, fiatMinorOf, parityMinorOf } from "../../src/domain/money.ts";
import { expectValidationError } from "../support/errors.ts";
import { halfWayValues } from "../support/half-way-values.ts";

/** The currencies of the rounding tests, one per number of decimals. */
const CURRENCIES = [
  ["JPY", 0],
  ["USD", 2],
  ["KWD", 3],
] as const;

describe("decimal literals", () => {
  it("accepts JSON's number grammar and nothing else", () => {
    for (const text of ["0", "-0", "5", "16", "1.5", "0.005", "-12.50", "1e2", "1E2", "1e+2", "1.5e-7", "1.5e21", "100000000000000000000000"]) {
      expect(isDecimalLiteral(text), text).to.equal(true);
    }
    for (const text of [
      "0x10",
      "0b11",
      "0o7",
      " 5",
      "5 ",
      "\t5",
      "5\n",
      "+5",
      ".5",
      "5.",
      "01",
      "-01",
      "00",
      "1_000",
      "1,5",
      "",
      "-",
      "e2",
      "1e",
      "1e2.5",
    ]) {
      expect(isDecimalLiteral(text), JSON.stringify(text)).to.equal(false);
      expect(parseDecimalLiteral(text)).to.equal(null);
    }
    for (const text of ["NaN", "Infinity", "-Infinity", "\u0661", "\uff15", "５"]) expect(isDecimalLiteral(text), text).to.equal(false);
  });

  it("without an exponent when told so", () => {
    for (const text of ["5", "-5", "1.5", "0.25"]) expect(isDecimalLiteral(text, { exponent: false }), text).to.equal(true);
    for (const text of ["1e2", "1.5E-3", "0x10", " 5"]) expect(isDecimalLiteral(text, { exponent: false }), text).to.equal(false);
  });

  it("reads the digits: coefficient without leading or trailing zeros, exponent, sign", () => {
    expect(parseDecimalLiteral("1.500")).to.deep.equal({ negative: false, coefficient: "15", exponent: -1 });
    expect(parseDecimalLiteral("-100")).to.deep.equal({ negative: true, coefficient: "1", exponent: 2 });
    expect(parseDecimalLiteral("0.005")).to.deep.equal({ negative: false, coefficient: "5", exponent: -3 });
    expect(parseDecimalLiteral("1.5e21")).to.deep.equal({ negative: false, coefficient: "15", exponent: 20 });
    expect(parseDecimalLiteral("-0.0e5")).to.deep.equal({ negative: false, coefficient: "0", exponent: 0 });
    expect(isIntegral(parseDecimalLiteral("1e2")!)).to.equal(true);
    expect(isIntegral(parseDecimalLiteral("100.0")!)).to.equal(true);
    expect(isIntegral(parseDecimalLiteral("1.5")!)).to.equal(false);
    expect(isIntegral(parseDecimalLiteral("15e-1")!)).to.equal(false);
    expect(decimalPlaces(parseDecimalLiteral("1.25")!)).to.equal(2);
    expect(decimalPlaces(parseDecimalLiteral("125e-4")!)).to.equal(4);
  });

  it("reads a number from its shortest representation, exponent notation included", () => {
    expect(decimalOfNumber(1.005)).to.deep.equal({ negative: false, coefficient: "1005", exponent: -3 });
    expect(decimalOfNumber(1e-7)).to.deep.equal({ negative: false, coefficient: "1", exponent: -7 });
    expect(decimalOfNumber(1.5e21)).to.deep.equal({ negative: false, coefficient: "15", exponent: 20 });
    expect(decimalOfNumber(-0)).to.deep.equal({ negative: false, coefficient: "0", exponent: 0 });
    expect(() => decimalOfNumber(Number.NaN)).to.throw(RangeError);
    expect(() => decimalOfNumber(Number.POSITIVE_INFINITY)).to.throw(RangeError);
  });

  it("rounds half away from zero on the digits, at any scale", () => {
    const round = (text: string, decimals: number, maxDigits?: number) => roundHalfAwayFromZero(parseDecimalLiteral(text)!, decimals, maxDigits);
    expect(round("1.005", 2)).to.equal(101n);
    expect(round("1.0049999999", 2)).to.equal(100n);
    expect(round("-1.005", 2)).to.equal(-101n);
    expect(round("-2.5", 0)).to.equal(-3n);
    expect(round("0.5", 0)).to.equal(1n);
    expect(round("0.49", 0)).to.equal(0n);
    expect(round("0.0005", 2)).to.equal(0n);
    expect(round("5e-7", 6)).to.equal(1n);
    expect(round("1e-7", 2)).to.equal(0n);
    expect(round("1.5e21", 0)).to.equal(1_500_000_000_000_000_000_000n);
    expect(round("1.5e21", 2, 20)).to.equal(null);
    expect(round("1e999999999999", 0)).to.equal(null);
    expect(round("1e-999999999999", 2)).to.equal(0n);
    expect(round("0", 3)).to.equal(0n);
  });
});

describe("fiat amounts: rounded half away from zero in the minor unit, on decimal digits", () => {
  for (const [currency, exponent] of CURRENCIES) {
    it(`200 half-way amounts in ${currency} (${exponent} decimals) round away from zero`, () => {
      expect(currencyExponent(currency)).to.equal(exponent);
      const values = halfWayValues(exponent);
      expect(values).to.have.length(200);
      for (const { text, value, minor } of values) {
        // The request carries the shortest representation of the number: the digits rounded are these.
        expect(String(value)).to.equal(text);
        expect(BigInt(fiatMinorOf("fiat_amount", value, exponent)), `${text} ${currency}`).to.equal(minor);
        expect(roundHalfAwayFromZero(decimalOfNumber(-value), exponent), `-${text} ${currency}`).to.equal(-minor);
      }
    });
  }

  it("includes the amounts that rounding the binary float gets wrong (1.005 USD is 101 cents, not 100)", () => {
    const wrongBefore = CURRENCIES.flatMap(([, exponent]) =>
      halfWayValues(exponent).filter(({ value, minor }) => BigInt(Math.round(value * 10 ** exponent)) !== minor),
    );
    expect(wrongBefore.map((v) => v.text)).to.include.members(["1.005", "0.145", "0.5005"]);
    expect(fiatMinorOf("fiat_amount", 1.005, 2)).to.equal(101);
    expect(fiatMinorOf("fiat_amount", 2.675, 2)).to.equal(268);
    expect(fiatMinorOf("fiat_amount", 1.0005, 3)).to.equal(1001);
    expect(fiatMinorOf("fiat_amount", 0.5, 0)).to.equal(1);
    expect(fiatMinorOf("fiat_amount", 2.5, 0)).to.equal(3);
  });

  it("reads exponent notation correctly and refuses what it cannot represent, as before", () => {
    expect(fiatMinorOf("fiat_amount", 1e-7, 2)).to.equal(0);
    expect(fiatMinorOf("fiat_amount", 5e-7, 3)).to.equal(0);
    expect(fiatMinorOf("fiat_amount", 1e15, 0)).to.equal(1e15);
    expect(fiatMinorOf("fiat_amount", 1e13, 2)).to.equal(1e15);
    expect(fiatMinorOf("fiat_amount", -0, 2)).to.equal(0);
    expectValidationError(() => fiatMinorOf("fiat_amount", 1.5e21, 0), "fiat_amount", /^fiat_amount is too large\.$/);
    expectValidationError(() => fiatMinorOf("fiat_amount", 1e15 + 1, 0), "fiat_amount", /^fiat_amount is too large\.$/);
    expectValidationError(() => fiatMinorOf("fiat_amount", 1e308, 3), "fiat_amount", /^fiat_amount is too large\.$/);
    for (const value of [-0.01, -1e-7, Number.NaN, Number.POSITIVE_INFINITY]) {
      expectValidationError(() => fiatMinorOf("fiat_amount", value, 2), "fiat_amount", /^fiat_amount must be a number, 0 or more\.$/);
    }
  });

  it("a withdrawal's amount at parity is converted on digits too", () => {
    expect(parityMinorOf(150, 0)).to.equal(2);
    expect(parityMinorOf(250, 0)).to.equal(3);
    expect(parityMinorOf(249, 0)).to.equal(2);
    expect(parityMinorOf(105, 3)).to.equal(1050);
    expect(parityMinorOf(100_000_000, 2)).to.equal(100_000_000);
  });

  it("dollars: at most 2 decimals, exponent notation read as the number it is", () => {
    expect(centsOf("amount_usd", 1.15)).to.equal(115);
    expect(centsOf("amount_usd", 0.29)).to.equal(29);
    expect(centsOf("amount_usd", 1e2)).to.equal(10_000);
    expectValidationError(() => centsOf("amount_usd", 1e-7), "amount_usd", /^amount_usd must have at most 2 decimals\.$/);
    expectValidationError(() => centsOf("amount_usd", 1.5e21), "amount_usd", /^amount_usd must be at most 1000000\.$/);
    expectValidationError(() => centsOf("amount_usd", 1.005), "amount_usd", /^amount_usd must have at most 2 decimals\.$/);
  });
});

describe("fiat currency codes", () => {
  it("three ASCII letters in any case, answered uppercase; USD by default", () => {
    expect(fiatCurrencyOf(undefined)).to.deep.equal({ currency: "USD", exponent: 2 });
    expect(fiatCurrencyOf("usd")).to.deep.equal({ currency: "USD", exponent: 2 });
    expect(fiatCurrencyOf("Jpy")).to.deep.equal({ currency: "JPY", exponent: 0 });
    expect(fiatCurrencyOf("bhd")).to.deep.equal({ currency: "BHD", exponent: 3 });
  });

  it("refuses letters that uppercasing would fold onto ASCII, and anything else that is not a code", () => {
    // "ſ" (long s) uppercases to "S", "ı" (dotless i) to "I", "ﬀ" to "FF".
    for (const code of [
      "u\u017fd",
      "\u0131nr",
      "\u017f\u017f\u017f",
      "\ufb00e",
      "\uff35\uff33\uff24",
      "US",
      "USDD",
      " usd",
      "usd ",
      "",
      "XYZ",
      "U5D",
    ]) {
      expectValidationError(() => fiatCurrencyOf(code), "fiat_currency", /^fiat_currency must be an ISO 4217 currency code\.$/);
    }
  });
});
