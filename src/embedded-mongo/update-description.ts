// updateDescription of an "update" change event: the difference between the document before and after, computed
// the way mongod diffs documents for pipeline-style updates (sub-documents by field, arrays by position, shrunk
// arrays in truncatedArrays).
import type { Document } from "bson";
import { compareValues } from "./bson-order.ts";

export interface UpdateDescription {
  updatedFields: Document;
  removedFields: string[];
  truncatedArrays: { field: string; newSize: number }[];
}

function isPlainObject(v: unknown): v is Document {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b) return false;
  return compareValues(a, b) === 0 && sameShape(a, b);
}

// compareValues treats equal numbers of different BSON types as equal, and so does mongod's diff for values
// stored as JS numbers here; objects must also have the same field order to be the same stored bytes.
function sameShape(a: unknown, b: unknown): boolean {
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k, i) => k === kb[i] && sameShape(a[k], b[k]));
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameShape(x, b[i]));
  return true;
}

export function describeUpdate(before: Document, after: Document): UpdateDescription {
  const out: UpdateDescription = { updatedFields: {}, removedFields: [], truncatedArrays: [] };
  diffObject(before, after, "", out);
  return out;
}

function diffObject(before: Document, after: Document, prefix: string, out: UpdateDescription): void {
  for (const key of Object.keys(before)) {
    if (!(key in after)) out.removedFields.push(prefix + key);
  }
  for (const key of Object.keys(after)) {
    const path = prefix + key;
    if (!(key in before)) {
      out.updatedFields[path] = after[key];
      continue;
    }
    diffValue(before[key], after[key], path, out);
  }
}

function diffValue(before: unknown, after: unknown, path: string, out: UpdateDescription): void {
  if (same(before, after)) return;
  if (isPlainObject(before) && isPlainObject(after)) diffObject(before, after, path + ".", out);
  else if (Array.isArray(before) && Array.isArray(after)) diffArray(before, after, path, out);
  else out.updatedFields[path] = after;
}

function diffArray(before: unknown[], after: unknown[], path: string, out: UpdateDescription): void {
  if (after.length < before.length) out.truncatedArrays.push({ field: path, newSize: after.length });
  const common = Math.min(before.length, after.length);
  for (let i = 0; i < common; i++) {
    if (same(before[i], after[i])) continue;
    if (isPlainObject(before[i]) && isPlainObject(after[i])) diffObject(before[i] as Document, after[i] as Document, `${path}.${i}.`, out);
    else out.updatedFields[`${path}.${i}`] = after[i];
  }
  for (let i = common; i < after.length; i++) out.updatedFields[`${path}.${i}`] = after[i];
}
