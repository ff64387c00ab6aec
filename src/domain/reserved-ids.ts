// Ids reserved for the objects an idempotent creation makes: derived from the seed its Idempotency-Key record
// was given, so a retry after a crash arrives at the ids the first run used and finds what it wrote
// (recovery points, as at Stripe). Without a key, objects get random ids.
import { createHmac } from "node:crypto";

const BASE62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** 24 characters of [A-Za-z0-9], one from each byte: rejection-free at a bias below 1/4 (good enough for an id). */
function base62Of(bytes: Buffer): string {
  let out = "";
  for (let i = 0; i < 24; i++) out += BASE62[bytes[i]! % 62];
  return out;
}

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

/** A KYC session id (`kyc_` and 24 characters), as newKycSessionId draws them. */
export function reservedKycSessionId(seed: string): string {
  return `kyc_${base62Of(reservedBytes(seed, "kyc_session", 0))}`;
}

/**
 * The id a transaction gets from a seed (an Idempotency-Key's, or a deposit reference): the same seed, the same
 * id. Its derivation predates reservedBytes and stays as it is, so stored deposits keep matching their references.
 */
export function derivedTransactionId(seed: string, kind: string): string {
  return `txn_${base62Of(createHmac("sha256", seed).update(`transaction:${kind}`).digest())}`;
}

/**
 * What a move made under an Idempotency-Key leaves on what it moved, in the write that applies it: derived from
 * the key's seed and the move, so that a retry of that request (and only of that request) recognises the move
 * its earlier run applied. The seed itself stays with the key's record.
 */
export function moveStamp(seed: string, move: string): string {
  return `mv_${base62Of(reservedBytes(seed, `move:${move}`, 0))}`;
}

/** The stamp a move leaves, and whether an earlier run of its request may have applied it already. */
export interface MoveMark {
  stamp: string;
  /** An earlier run holding the same key died or failed with a 5xx: look for its stamp before moving. */
  resumed: boolean;
}

/** The mark of `move` for a call's reservation (its Idempotency-Key's seed), or null when it has no key. */
export function moveMarkOf(reservation: { seed: string; resumed: boolean } | null, move: string): MoveMark | null {
  return reservation ? { stamp: moveStamp(reservation.seed, move), resumed: reservation.resumed } : null;
}
