// `$unwind` over the documents as stored, so each element and the fields beside it keep their BSON types (mingo's
// works on plain numbers, and writes into the documents it is given). As mongod: an array gives a document per
// element; an empty array, null or a missing field gives none unless `preserveNullAndEmptyArrays` (an empty array's
// field is then removed, null kept); any other value passes as it is; `includeArrayIndex` is an int64 (null for a
// document that did not come from an element). The path does not descend into arrays.
import { Long, type Document } from "bson";
import { isPlainObject } from "./bson-order.ts";

type UnwindSpec = { path: string[]; index?: string; preserve: boolean };

/** The specification, or undefined for one mingo is left to refuse. */
export function parseUnwind(spec: unknown): UnwindSpec | undefined {
  const given = typeof spec === "string" ? { path: spec } : spec;
  if (!isPlainObject(given)) return undefined;
  const { path, includeArrayIndex, preserveNullAndEmptyArrays } = given;
  if (typeof path !== "string" || !path.startsWith("$") || path.length < 2 || path.startsWith("$$")) return undefined;
  if (includeArrayIndex !== undefined && (typeof includeArrayIndex !== "string" || includeArrayIndex === "" || includeArrayIndex.startsWith("$")))
    return undefined;
  if (preserveNullAndEmptyArrays !== undefined && typeof preserveNullAndEmptyArrays !== "boolean") return undefined;
  if (Object.keys(given).some((k) => k !== "path" && k !== "includeArrayIndex" && k !== "preserveNullAndEmptyArrays")) return undefined;
  return { path: path.slice(1).split("."), index: includeArrayIndex, preserve: preserveNullAndEmptyArrays === true };
}

function valueAt(doc: Document, path: string[]): unknown {
  let v: unknown = doc;
  for (const part of path) {
    if (!isPlainObject(v)) return undefined;
    v = v[part];
  }
  return v;
}

/** `doc` with the value at `path` replaced (undefined: removed), copying the objects along it. */
function withValue(doc: Document, path: string[], value: unknown): Document {
  const [head, ...rest] = path as [string, ...string[]];
  const out = { ...doc };
  if (rest.length === 0) {
    if (value === undefined) delete out[head];
    else out[head] = value;
  } else out[head] = withValue(out[head] as Document, rest, value);
  return out;
}

export function unwind(docs: Document[], spec: UnwindSpec): Document[] {
  const out: Document[] = [];
  const indexed = (doc: Document, i: number | null) =>
    spec.index === undefined ? doc : { ...doc, [spec.index]: i === null ? null : Long.fromNumber(i) };
  for (const doc of docs) {
    const value = valueAt(doc, spec.path);
    if (Array.isArray(value) && value.length > 0) {
      value.forEach((element, i) => out.push(indexed(withValue(doc, spec.path, element), i)));
    } else if (Array.isArray(value)) {
      if (spec.preserve) out.push(indexed(withValue(doc, spec.path, undefined), null));
    } else if ((value !== null && value !== undefined) || spec.preserve) {
      out.push(indexed(doc, null));
    }
  }
  return out;
}
