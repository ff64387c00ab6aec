// Reading the console's posted form fields and showing amounts: one rule for every form.
import { decimalLiteralValue } from "../domain/decimal.ts";
import { svcError } from "../domain/errors.ts";
import type { ConsoleContext } from "./console-router.ts";

/**
 * A form's number field, empty for none: a plain decimal literal (no sign but "-", no exponent, no spaces, no
 * hexadecimal, binary or octal form), a whole one where `integer`. The service validates the value, as it does
 * the API's JSON numbers.
 */
export function formDecimal(ctx: ConsoleContext, name: string, integer = false): number | undefined {
  const text = ctx.form.get(name) ?? "";
  if (text === "") return undefined;
  const value = decimalLiteralValue(text, { exponent: false, integer });
  if (value === null) {
    throw svcError("validation_error", integer ? `${name} must be a whole number.` : `${name} must be a decimal number such as 12.50.`, {
      param: name,
    });
  }
  return value;
}

/** A form's text field without surrounding spaces, or undefined when empty. */
export function formText(ctx: ConsoleContext, name: string): string | undefined {
  const text = (ctx.form.get(name) ?? "").trim();
  return text === "" ? undefined : text;
}

/** Dollars as the API answers them, shown with two decimals. */
export function usd(amount: number): string {
  return amount.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}
