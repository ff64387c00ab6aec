// Lengths as people count them, and what counts as text in a string field.
import { validationError } from "./errors.ts";

/** Length in Unicode code points, so an emoji or an astral-plane letter counts as one character. */
export function codePointLength(value: string): number {
  let count = 0;
  for (const _ of value) count++;
  return count;
}

/**
 * Fields whose value is free text, where a tab and a line feed are allowed; every other string field is one line.
 * Listed once, by field name, for REST and RPC alike.
 */
export const FREE_TEXT_FIELDS: ReadonlySet<string> = new Set(["description"]);

// C0 controls and DEL, tab and line feed excepted (checked apart); and UTF-16 surrogates not in a pair, which no
// UTF-8 text can hold (JSON can spell them as "\ud800").
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/;
const TAB_OR_LINE_FEED = /[\t\n]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Why a string is not acceptable text, as a phrase completing "must not contain ...", or null when it is. Refused:
 * NUL and the other C0 control characters and DEL (tab and line feed are allowed in free text), and lone surrogates.
 */
export function textProblem(value: string, freeText: boolean): string | null {
  const control = CONTROL.exec(value) ?? (freeText ? null : TAB_OR_LINE_FEED.exec(value));
  if (control !== null) {
    const code = control[0].charCodeAt(0);
    const name = code === 0 ? "NUL" : `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
    return `control characters (${name})${freeText ? "; only tab and line feed are allowed" : ""}`;
  }
  if (LONE_SURROGATE.test(value)) return "a lone UTF-16 surrogate (an unpaired \\uD800-\\uDFFF), which is not text";
  return null;
}

/** Throws 422 `validation_error` naming `param` when `value` is not acceptable text (see `textProblem`). */
export function checkText(param: string, value: string, field: string): string {
  const problem = textProblem(value, FREE_TEXT_FIELDS.has(field));
  if (problem !== null) throw validationError(param, `${param} must not contain ${problem}.`);
  return value;
}
