// updateDescription of an "update" change event: the difference between the document before and after, computed
// the way mongod diffs documents for pipeline-style updates (sub-documents by field, arrays by position, shrunk
// arrays in truncatedArrays). Paths whose dotted form is ambiguous (a numeric field name, which reads like an
// array index, or a field name holding a dot) are also listed component by component in disambiguatedPaths,
// array indexes as numbers, as mongod 6.1+ reports them to streams with showExpandedEvents.
import type { Document } from "bson";
import { compareValues, isPlainObject } from "./bson-order.ts";

export interface UpdateDescription {
  updatedFields: Document;
  removedFields: string[];
  truncatedArrays: { field: string; newSize: number }[];
  /** Absent in descriptions journaled before it was recorded (read as empty). */
  disambiguatedPaths?: Document;
}

/** A path component: a field name, or an array index (a number). */
type Part = string | number;

function isAmbiguous(parts: Part[]): boolean {
  return parts.some((p) => typeof p === "string" && (/^[0-9]+$/.test(p) || p.includes(".")));
}

function record(out: UpdateDescription, parts: Part[]): string {
  const path = parts.join(".");
  if (isAmbiguous(parts)) out.disambiguatedPaths![path] = parts;
  return path;
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
  const out: UpdateDescription = { updatedFields: {}, removedFields: [], truncatedArrays: [], disambiguatedPaths: {} };
  diffObject(before, after, [], out);
  return out;
}

function diffObject(before: Document, after: Document, prefix: Part[], out: UpdateDescription): void {
  for (const key of Object.keys(before)) {
    if (!(key in after)) out.removedFields.push(record(out, [...prefix, key]));
  }
  for (const key of Object.keys(after)) {
    const parts = [...prefix, key];
    if (!(key in before)) {
      out.updatedFields[record(out, parts)] = after[key];
      continue;
    }
    diffValue(before[key], after[key], parts, out);
  }
}

function diffValue(before: unknown, after: unknown, parts: Part[], out: UpdateDescription): void {
  if (same(before, after)) return;
  if (isPlainObject(before) && isPlainObject(after)) diffObject(before, after, parts, out);
  else if (Array.isArray(before) && Array.isArray(after)) diffArray(before, after, parts, out);
  else out.updatedFields[record(out, parts)] = after;
}

function diffArray(before: unknown[], after: unknown[], parts: Part[], out: UpdateDescription): void {
  if (after.length < before.length) out.truncatedArrays.push({ field: record(out, parts), newSize: after.length });
  const common = Math.min(before.length, after.length);
  for (let i = 0; i < common; i++) {
    if (same(before[i], after[i])) continue;
    if (isPlainObject(before[i]) && isPlainObject(after[i])) diffObject(before[i] as Document, after[i] as Document, [...parts, i], out);
    else out.updatedFields[record(out, [...parts, i])] = after[i];
  }
  for (let i = common; i < after.length; i++) out.updatedFields[record(out, [...parts, i])] = after[i];
}
