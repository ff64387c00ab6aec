// Identifiers of the public objects, in the shapes docs/contract.md, Resources, gives them.
import { randomInt } from "node:crypto";
import { BASE62_DIGITS, newUuid, randomBase62 } from "./random.ts";

/** Nine digits, first digit 1-9, so it always matches the `^\d{1,9}$` pattern of user ids in paths. */
export function newUserId(): string {
  return String(randomInt(100_000_000, 1_000_000_000));
}

export const USER_ID_PATTERN = /^\d{1,9}$/;

export function newEventId(): string {
  return `evt_${newUuid()}`;
}

/** Eight such digits hold any millisecond time until the year 8800. */
const TIME_DIGITS = 8;

/**
 * `prefix`, the time in milliseconds (eight ordered base62 digits), then 16 random characters (95 bits): ids that
 * sort by time, so the _id index of a collection written as things happen grows at its end (an insert in order
 * costs an index far less than one at a random place, mongod's B-tree and the embedded database's alike), and that
 * stay unguessable.
 */
function timeOrderedId(prefix: string, now: number): string {
  let time = "";
  for (let rest = now, i = 0; i < TIME_DIGITS; i++, rest = Math.floor(rest / 62)) time = BASE62_DIGITS[rest % 62] + time;
  return `${prefix}${time}${randomBase62(24 - TIME_DIGITS)}`;
}

/** A call's request id: its request log entry's _id. */
export function newRequestId(now = Date.now()): string {
  return timeOrderedId("req_", now);
}

export function newApiKeyId(): string {
  return `key_${randomBase62(24)}`;
}

export function newWalletId(): string {
  return `wal_${randomBase62(24)}`;
}

/** A delivery's id: ten of them are written per event, the most frequent insert of a busy project. */
export function newDeliveryId(now = Date.now()): string {
  return timeOrderedId("whd_", now);
}

export function newKycSessionId(): string {
  return `kyc_${randomBase62(24)}`;
}
