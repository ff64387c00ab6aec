// Schema validation: a collection's `validator` (query operators, as given to create or collMod) checked on every
// insert and update with its validationLevel (strict, moderate, off) and validationAction (error, warn). A
// document that fails answers 121 DocumentValidationFailure with mongod's errInfo: the failing _id and details
// naming the operators not satisfied. $jsonSchema is not implemented and is refused when the validator is set,
// never accepted and left unenforced.
import type { Document } from "bson";
import { valuesAtPath } from "./bson-order.ts";
import { bsonTypeName } from "../bson/bson-type-names.ts";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import { createQuery } from "./matcher.ts";

const LEVELS = ["off", "strict", "moderate"];
const ACTIONS = ["error", "warn"];
const UNSUPPORTED_OPERATORS = new Set(["$jsonSchema", "$where", "$text", "$near", "$nearSphere", "$geoWithin", "$geoIntersects"]);

function isObject(v: unknown): v is Document {
  return (
    v !== null &&
    typeof v === "object" &&
    !Array.isArray(v) &&
    !(v instanceof Date) &&
    !(v instanceof RegExp) &&
    !(v as { _bsontype?: string })._bsontype
  );
}

/** Checks validator, validationLevel and validationAction of a create or collMod (`command`). */
export function checkValidationOptions(options: Document, command: string): void {
  if (options.validator !== undefined) {
    if (!isObject(options.validator))
      throw commandError(ErrorCodes.TypeMismatch, `BSON field '${command}.validator' is the wrong type, expected type 'object'`);
    const refused = findOperator(options.validator, UNSUPPORTED_OPERATORS);
    if (refused) throw commandError(ErrorCodes.InvalidOptions, `validators using ${refused} are not supported by the embedded server`);
    try {
      createQuery(options.validator);
    } catch (err) {
      throw commandError(ErrorCodes.BadValue, `Parsing of collection validator failed :: caused by :: ${(err as Error).message}`);
    }
  }
  if (options.validationLevel !== undefined && !LEVELS.includes(options.validationLevel as string))
    throw commandError(
      ErrorCodes.BadValue,
      `Enumeration value '${String(options.validationLevel)}' for field '${command}.validationLevel' is not a valid value.`,
    );
  if (options.validationAction !== undefined && !ACTIONS.includes(options.validationAction as string))
    throw commandError(
      ErrorCodes.BadValue,
      `Enumeration value '${String(options.validationAction)}' for field '${command}.validationAction' is not a valid value.`,
    );
}

function findOperator(value: unknown, names: Set<string>): string | undefined {
  if (Array.isArray(value)) {
    for (const v of value) {
      const found = findOperator(v, names);
      if (found) return found;
    }
    return undefined;
  }
  if (!isObject(value)) return undefined;
  for (const [k, v] of Object.entries(value)) {
    if (names.has(k)) return k;
    const found = findOperator(v, names);
    if (found) return found;
  }
  return undefined;
}

/** Whether writes to `coll` are validated (a validator at a level other than off). */
export function validates(coll: { readonly options: Document } | undefined): boolean {
  return coll !== undefined && isObject(coll.options.validator) && coll.options.validationLevel !== "off";
}

/**
 * Checks `doc` (the document an insert or update writes; `before`: the document it replaces) against the
 * collection's validator. Moderate level leaves alone updates of documents that did not pass already; the warn
 * action lets a failing document through (mongod only logs it).
 */
export function validateDocument(
  coll: { readonly options: Document } | undefined,
  doc: Document,
  before: Document | undefined,
  bypass: unknown,
): void {
  if (bypass === true || !validates(coll)) return;
  const options = coll!.options;
  if (options.validationAction === "warn") return;
  const validator = options.validator as Document;
  const query = createQuery(validator);
  if (query.test(doc)) return;
  if (options.validationLevel === "moderate" && before !== undefined && !query.test(before)) return;
  throw commandError(121, "Document failed validation", {
    codeName: "DocumentValidationFailure",
    errInfo: { failingDocumentId: doc._id, details: explain(validator, doc) },
  });
}

/** mongod's description of why `doc` fails `filter` (its doc_validation_error details). */
function explain(filter: Document, doc: Document): Document {
  const entries = Object.entries(filter);
  const [only] = entries;
  if (entries.length === 1 && only) return clauseDetails(only, doc);
  const clauses = entries.map(([k, v]) => ({ [k]: v }) as Document);
  return { operatorName: "$and", clausesNotSatisfied: failing(clauses, doc) };
}

function failing(clauses: Document[], doc: Document): Document[] {
  const out: Document[] = [];
  clauses.forEach((clause, index) => {
    if (!createQuery(clause).test(doc)) out.push({ index, details: explain(clause, doc) });
  });
  return out;
}

/** Details of one field or operator of a validator, `{[key]: value}`. */
function clauseDetails([key, value]: [key: string, value: unknown], doc: Document): Document {
  const clause = { [key]: value };
  if (key === "$and" || key === "$or") {
    const subs = value as Document[];
    if (key === "$and") return { operatorName: "$and", clausesNotSatisfied: failing(subs, doc) };
    return { operatorName: "$or", clausesNotSatisfied: subs.map((sub, index) => ({ index, details: explain(sub, doc) })) };
  }
  if (key === "$nor") {
    const satisfied = (value as Document[]).map((sub, index) => ({ sub, index })).filter(({ sub }) => createQuery(sub).test(doc));
    return { operatorName: "$nor", clausesSatisfied: satisfied.map(({ index }) => ({ index })) };
  }
  if (key === "$expr") return { operatorName: "$expr", specifiedAs: clause, reason: "expression did not match", expressionResult: false };
  if (key.startsWith("$")) return { operatorName: key, specifiedAs: clause, reason: "expression did not match" };
  const operators = isObject(value) && Object.keys(value)[0]?.startsWith("$") ? Object.entries(value) : undefined;
  if (!operators) return fieldDetails(key, "$eq", value, { [key]: value }, doc);
  const failed = operators.filter(([op, arg]) => !createQuery({ [key]: { [op]: arg } }).test(doc));
  const [onlyOperator] = operators;
  if (operators.length === 1 && onlyOperator) return fieldDetails(key, onlyOperator[0], onlyOperator[1], clause, doc);
  return {
    operatorName: "$and",
    clausesNotSatisfied: operators
      .map(([op, arg], index) => ({ op, arg, index }))
      .filter(({ op }) => failed.some(([f]) => f === op))
      .map(({ op, arg, index }) => ({ index, details: fieldDetails(key, op, arg, { [key]: { [op]: arg } }, doc) })),
  };
}

const REASONS: Record<string, string> = {
  $eq: "comparison failed",
  $ne: "comparison succeeded",
  $gt: "comparison failed",
  $gte: "comparison failed",
  $lt: "comparison failed",
  $lte: "comparison failed",
  $in: "no matching value found in array",
  $nin: "matching value found in array",
  $type: "type did not match",
  $regex: "regular expression did not match",
  $exists: "path does exist",
};

function fieldDetails(field: string, op: string, arg: unknown, specifiedAs: Document, doc: Document): Document {
  const values = valuesAtPath(doc, field).filter((v) => v !== undefined);
  const out: Document = { operatorName: op, specifiedAs };
  if (values.length === 0) {
    out.reason = op === "$exists" && arg ? "path does not exist" : "field was missing";
    return out;
  }
  out.reason = REASONS[op] ?? "expression did not match";
  if (values.length === 1) {
    out.consideredValue = values[0];
    if (op === "$type") out.consideredType = bsonTypeName(values[0]);
  } else {
    out.consideredValues = values;
    if (op === "$type") out.consideredTypes = values.map(bsonTypeName);
  }
  return out;
}
