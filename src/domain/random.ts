// Unbiased random identifiers and secrets from the operating system's CSPRNG.
import { randomInt, randomUUID } from "node:crypto";

/** The 62 digits and letters in ascending character order, so that fixed-width numerals sort as their numbers do. */
export const BASE62_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `length` characters of [A-Za-z0-9]; randomInt draws without modulo bias. */
export function randomBase62(length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += BASE62_DIGITS[randomInt(62)];
  return out;
}

export function newUuid(): string {
  return randomUUID();
}
