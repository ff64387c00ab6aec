// `create`'s clustered and time-series options, checked and normalized as mongod 7.0 stores them (and so as
// listCollections reports them), plus what the other commands need to know of such collections.
//
// A clustered collection (`clusteredIndex: {key: {_id: 1}, unique: true}`) behaves like a plain one whose _id
// index is the clustered index. A time-series collection keeps its documents as inserted (mongod buckets them
// internally; reads see the same documents): `_id` is not unique, the timeField must hold a date, and
// `expireAfterSeconds` removes documents whose time is older. Updates and findAndModify on it are refused.
import type { Document } from "bson";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import { checkValidationOptions } from "../query/validation.ts";

const GRANULARITIES: Record<string, number> = { seconds: 3600, minutes: 86400, hours: 2592000 };
const MAX_BUCKET_SECONDS = 31536000;
const TIMESERIES_FIELDS = new Set(["timeField", "metaField", "granularity", "bucketMaxSpanSeconds", "bucketRoundingSeconds"]);
const CLUSTERED_FIELDS = new Set(["key", "unique", "name", "v"]);

function isObject(v: unknown): v is Document {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Checks and normalizes `options` of a `create` in place (clusteredIndex, timeseries, expireAfterSeconds). */
export function normalizeCreateOptions(options: Document): void {
  checkValidationOptions(options, "create");
  if (options.clusteredIndex !== undefined) {
    if (options.timeseries !== undefined)
      throw commandError(ErrorCodes.InvalidOptions, "Specifying both 'clusteredIndex' and 'timeseries' is not supported");
    if (options.capped === true) throw commandError(ErrorCodes.InvalidOptions, "Clustered collections cannot be capped");
    options.clusteredIndex = clusteredIndex(options.clusteredIndex);
  }
  if (options.timeseries !== undefined) {
    if (options.capped === true) throw commandError(ErrorCodes.InvalidOptions, "Time-series collections cannot be capped");
    options.timeseries = timeseriesOptions(options.timeseries);
  }
  if (options.expireAfterSeconds !== undefined) {
    const secs = options.expireAfterSeconds;
    if (typeof secs !== "number" || !Number.isInteger(secs))
      throw commandError(ErrorCodes.TypeMismatch, "'expireAfterSeconds' must be a number, representing a whole number of seconds");
    if (secs < 0) throw commandError(ErrorCodes.InvalidOptions, "'expireAfterSeconds' must be a non-negative number");
    if (options.timeseries === undefined) {
      if (options.clusteredIndex === undefined)
        throw commandError(ErrorCodes.InvalidOptions, "'expireAfterSeconds' requires clustering to be enabled");
      // Expiry by a clustered _id date is not implemented: refused rather than kept and never applied.
      throw commandError(ErrorCodes.InvalidOptions, "'expireAfterSeconds' on a clustered collection is not supported by the embedded server");
    }
  }
}

function clusteredIndex(raw: unknown): Document {
  if (raw === true) throw commandError(ErrorCodes.InvalidOptions, "The 'clusteredIndex' option is only supported as an object here");
  if (!isObject(raw)) throw commandError(ErrorCodes.TypeMismatch, "BSON field 'clusteredIndex' is the wrong type, expected type 'object'");
  for (const field of Object.keys(raw)) {
    if (!CLUSTERED_FIELDS.has(field)) throw commandError(40415, `BSON field 'create.clusteredIndex.${field}' is an unknown field.`);
  }
  if (raw.key === undefined) throw commandError(40414, "BSON field 'create.clusteredIndex.key' is missing but a required field");
  if (raw.unique === undefined) throw commandError(40414, "BSON field 'create.clusteredIndex.unique' is missing but a required field");
  const key = raw.key as Document;
  if (!isObject(key) || Object.keys(key).length !== 1 || key._id !== 1)
    throw commandError(ErrorCodes.InvalidOptions, "The clusteredIndex option is only supported for key: {_id: 1}");
  if (raw.unique !== true) throw commandError(ErrorCodes.InvalidOptions, "The clusteredIndex option requires unique: true");
  if (raw.v !== undefined && raw.v !== 2) throw commandError(ErrorCodes.InvalidOptions, "Invalid clustered index spec version: must be 2");
  if (raw.name !== undefined && (typeof raw.name !== "string" || raw.name === ""))
    throw commandError(ErrorCodes.BadValue, "The clustered index name must be a non-empty string");
  return { v: 2, key: { _id: 1 }, name: raw.name ?? "_id_", unique: true };
}

function timeseriesOptions(raw: unknown): Document {
  if (!isObject(raw)) throw commandError(ErrorCodes.TypeMismatch, "BSON field 'create.timeseries' is the wrong type, expected type 'object'");
  for (const field of Object.keys(raw)) {
    if (!TIMESERIES_FIELDS.has(field)) throw commandError(40415, `BSON field 'create.timeseries.${field}' is an unknown field.`);
  }
  const { timeField, metaField, granularity } = raw;
  if (timeField === undefined) throw commandError(40414, "BSON field 'create.timeseries.timeField' is missing but a required field");
  if (typeof timeField !== "string")
    throw commandError(ErrorCodes.TypeMismatch, "BSON field 'create.timeseries.timeField' is the wrong type, expected type 'string'");
  if (metaField !== undefined && typeof metaField !== "string")
    throw commandError(ErrorCodes.TypeMismatch, "BSON field 'create.timeseries.metaField' is the wrong type, expected type 'string'");
  for (const [field, value] of [
    ["timeField", timeField],
    ["metaField", metaField],
  ] as const) {
    if (value === undefined) continue;
    if (value === "" || value.startsWith("$") || value.includes("."))
      throw commandError(ErrorCodes.BadValue, `The '${field}' field name must be a non-empty top-level field name: ${value}`);
  }
  if (metaField === "_id") throw commandError(ErrorCodes.BadValue, "The 'metaField' field name cannot be '_id'");
  if (metaField === timeField) throw commandError(ErrorCodes.BadValue, "The 'metaField' and 'timeField' fields cannot be the same");
  if (granularity !== undefined && (typeof granularity !== "string" || !(granularity in GRANULARITIES)))
    throw commandError(
      ErrorCodes.BadValue,
      `Enumeration value '${String(granularity)}' for field 'create.timeseries.granularity' is not a valid value.`,
    );
  const span = raw.bucketMaxSpanSeconds;
  const rounding = raw.bucketRoundingSeconds;
  const out: Document = { timeField };
  if (metaField !== undefined) out.metaField = metaField;
  if (span === undefined && rounding === undefined) {
    const g = (granularity as string | undefined) ?? "seconds";
    out.granularity = g;
    out.bucketMaxSpanSeconds = GRANULARITIES[g];
    return out;
  }
  for (const [field, value] of [
    ["bucketMaxSpanSeconds", span],
    ["bucketRoundingSeconds", rounding],
  ] as const) {
    if (value !== undefined && (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_BUCKET_SECONDS))
      throw commandError(ErrorCodes.BadValue, `Timeseries '${field}' must be a whole number between 1 and ${MAX_BUCKET_SECONDS}`);
  }
  if (granularity !== undefined) {
    // With a granularity, only its own span may be restated.
    if (rounding !== undefined || span !== GRANULARITIES[granularity as string])
      throw commandError(
        ErrorCodes.InvalidOptions,
        `Timeseries 'bucketMaxSpanSeconds' is not configurable to a value other than the default of ${GRANULARITIES[granularity as string]} for the provided granularity`,
      );
    out.granularity = granularity;
    out.bucketMaxSpanSeconds = span;
    return out;
  }
  if (span === undefined || rounding === undefined)
    throw commandError(
      ErrorCodes.InvalidOptions,
      "Timeseries 'bucketMaxSpanSeconds' and 'bucketRoundingSeconds' need to be set alongside each other",
    );
  if (span !== rounding)
    throw commandError(ErrorCodes.InvalidOptions, "Timeseries 'bucketMaxSpanSeconds' and 'bucketRoundingSeconds' fields must be equal");
  out.bucketRoundingSeconds = rounding;
  out.bucketMaxSpanSeconds = span;
  return out;
}

/** What these rules read of a collection (the Collection class satisfies it; collection.ts imports this file). */
interface CollectionFacts {
  readonly options: Document;
  readonly timeseries: boolean;
  readonly ns: string;
  readonly docs: Iterable<[number, Document]>;
}

/** A time-series document must carry a date in the timeField (mongod: BadValue, per document). */
export function checkTimeseriesDocument(options: Document, doc: Document): void {
  const timeField = (options.timeseries as Document).timeField as string;
  if (!(doc[timeField] instanceof Date))
    throw commandError(ErrorCodes.BadValue, `'${timeField}' must be present and contain a valid BSON UTC datetime value`);
}

/** Updates and findAndModify on a time-series collection are not implemented: refused, never approximated. */
export function refuseTimeseriesWrite(coll: CollectionFacts | undefined, command: string): void {
  if (coll?.timeseries)
    throw commandError(ErrorCodes.InvalidOptions, `${command} on the time-series collection ${coll.ns} is not supported by the embedded server`);
}

/** Documents of time-series collections whose time is older than the collection's expireAfterSeconds. */
export function expiredTimeseriesRecords(coll: CollectionFacts, now: number): number[] {
  const secs = coll.options.expireAfterSeconds;
  if (!coll.timeseries || typeof secs !== "number") return [];
  const timeField = (coll.options.timeseries as Document).timeField as string;
  const cutoff = now - secs * 1000;
  const expired: number[] = [];
  for (const [rid, doc] of coll.docs) {
    const time = doc[timeField];
    if (time instanceof Date && time.getTime() < cutoff) expired.push(rid);
  }
  return expired;
}
