// Identifiers of the public objects, in the shapes docs/contract.md, Resources, gives them.
import { randomInt } from "node:crypto";
import { newUuid, randomBase62 } from "./random.ts";

/** Nine digits, first digit 1-9, so it always matches the `^\d{1,9}$` pattern of user ids in paths. */
export function newUserId(): string {
  return String(randomInt(100_000_000, 1_000_000_000));
}

export const USER_ID_PATTERN = /^\d{1,9}$/;

export function newEventId(): string {
  return `evt_${newUuid()}`;
}

export function newRequestId(): string {
  return `req_${randomBase62(24)}`;
}

export function newApiKeyId(): string {
  return `key_${randomBase62(24)}`;
}

export function newWalletId(): string {
  return `wal_${randomBase62(24)}`;
}

export function newDeliveryId(): string {
  return `whd_${randomBase62(24)}`;
}

export function newKycSessionId(): string {
  return `kyc_${randomBase62(24)}`;
}
