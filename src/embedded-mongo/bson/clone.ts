// Deep copies of stored documents: what a command answers or keeps must never alias what the store holds.
import type { Document } from "bson";

/** Deep copy of plain objects and arrays; BSON value objects are immutable in practice and shared. */
export function cloneDocument<T>(value: T): T {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(cloneDocument) as T;
  if (value instanceof Date) return new Date(value.getTime()) as T;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Document = {};
  for (const k of Object.keys(value as Document)) out[k] = cloneDocument((value as Document)[k]);
  return out as T;
}
