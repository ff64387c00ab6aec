// Small conversions from proto values to the API's JSON: times as RFC 3339 UTC with milliseconds, unset as null.
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";

export function isoTime(timestamp: Timestamp | undefined): string | null {
  return timestamp ? timestampDate(timestamp).toISOString() : null;
}

/** For fields that are never null (docs/contract.md, Resources). */
export function requiredIsoTime(timestamp: Timestamp | undefined): string {
  if (!timestamp) throw new Error("a required timestamp is unset");
  return timestampDate(timestamp).toISOString();
}

/** Cents (Int64) as a number of dollars. */
export function centsAsDollars(cents: bigint): number {
  return Number(cents) / 100;
}

export function orNull<T>(value: T | undefined): T | null {
  return value === undefined ? null : value;
}

export interface JsonList<T> {
  object: "list";
  url: string;
  data: T[];
  has_more: boolean;
}

export function jsonList<T>(url: string, data: T[], hasMore: boolean): JsonList<T> {
  return { object: "list", url, data, has_more: hasMore };
}
