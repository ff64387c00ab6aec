// Ids reserved for the objects an idempotent creation makes: derived from the seed its Idempotency-Key record
// was given, so a retry after a crash arrives at the ids the first run used and finds what it wrote
// (recovery points, as at Stripe). Without a key, objects get random ids.
import { createHmac } from "node:crypto";

/** The bytes behind the `attempt`-th id of `kind` reserved by `seed` (attempt > 0 after a rare id collision). */
function reservedBytes(seed: string, kind: string, attempt: number): Buffer {
  return createHmac("sha256", seed).update(`${kind}:${attempt}`).digest();
}

/** A user id (nine digits, first 1-9), as newUserId draws them. */
export function reservedUserId(seed: string, attempt: number): string {
  return String(100_000_000 + (reservedBytes(seed, "user", attempt).readUInt32BE(0) % 900_000_000));
}

/** A version 4 UUID, as newUuid draws them. */
export function reservedUuid(seed: string, kind: string): string {
  const bytes = reservedBytes(seed, kind, 0).subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
