// Unbiased random identifiers and secrets from the operating system's CSPRNG.
import { randomInt, randomUUID } from "node:crypto";

const BASE62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** `length` characters of [A-Za-z0-9]; randomInt draws without modulo bias. */
export function randomBase62(length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

export function newUuid(): string {
  return randomUUID();
}
