// A command's numbers keep their BSON type where they become data (documents, filters, updates, pipelines) and
// where mongod takes one type only (getMore's and killCursors' cursor ids: an int64); its other options (limit,
// batchSize, txnNumber, index keys...) are read as plain JS numbers, an int64 beyond ±2^53 staying a Long, so
// handlers compare them natively whatever type the client sent.
import type { Document } from "bson";
import { plainNumbers } from "../bson/numbers.ts";
import { isPlainObject } from "../query/bson-order.ts";

/** Fields whose value is data: insert's documents, filters, findAndModify's update, aggregate's pipeline, `let`. */
const DATA_FIELDS = new Set(["documents", "filter", "query", "update", "pipeline", "arrayFilters", "let"]);
/** Fields whose BSON type is checked: cursor ids (bson/cursor-ids.ts). */
const TYPED_FIELDS = new Set(["getMore", "cursors"]);
/** The same in an update or delete statement. */
const STATEMENT_DATA_FIELDS = new Set(["q", "u", "arrayFilters"]);

/** The command with plain numbers everywhere but in its data fields (explain's inner command alike). */
export function withPlainOptions(cmd: Document): Document {
  const out: Document = {};
  for (const [key, value] of Object.entries(cmd)) {
    if (DATA_FIELDS.has(key) || TYPED_FIELDS.has(key)) out[key] = value;
    else if ((key === "updates" || key === "deletes") && Array.isArray(value)) out[key] = value.map(statementWithPlainOptions);
    else if (key === "explain" && isPlainObject(value)) out[key] = withPlainOptions(value);
    else out[key] = plainNumbers(value);
  }
  return out;
}

function statementWithPlainOptions(statement: unknown): unknown {
  if (!isPlainObject(statement)) return plainNumbers(statement);
  return Object.fromEntries(Object.entries(statement).map(([key, value]) => [key, STATEMENT_DATA_FIELDS.has(key) ? value : plainNumbers(value)]));
}
