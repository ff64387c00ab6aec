// Helpers shared by command handlers: argument checks, projections, cursor replies.
import type { Document } from "bson";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import type { CommandContext } from "./context.ts";
import type { Batch } from "./cursors.ts";
import type { Collation } from "../query/collation.ts";
import { compileProjection } from "../query/projection.ts";

/** The collection name held by the command's first field (e.g. `{ find: "users" }`). */
export function collectionName(cmd: Document, field: string): string {
  const name = cmd[field];
  if (typeof name !== "string") {
    throw commandError(ErrorCodes.InvalidNamespace, `collection name has invalid type ${name === null ? "null" : typeof name}`);
  }
  return name;
}

export function optionalDocument(cmd: Document, field: string): Document | undefined {
  const v = cmd[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "object" || Array.isArray(v)) {
    throw commandError(
      ErrorCodes.TypeMismatch,
      `BSON field '${field}' is the wrong type '${Array.isArray(v) ? "array" : typeof v}', expected type 'object'`,
    );
  }
  return v as Document;
}

export function optionalNumber(cmd: Document, field: string): number | undefined {
  const v = cmd[field];
  if (v === undefined || v === null) return undefined;
  const n = typeof v === "number" ? v : Number(v);
  if (!Number.isFinite(n)) throw commandError(ErrorCodes.TypeMismatch, `BSON field '${field}' is the wrong type, expected a number`);
  return n;
}

/**
 * A reusable projection function (inclusion, exclusion, $slice, $elemMatch, a positional path by the query's
 * `filter` and `collation`...), or undefined for none.
 */
export function projector(projection: Document | undefined, filter: Document, collation?: Collation): ((doc: Document) => Document) | undefined {
  return compileProjection(projection, filter, collation);
}

export function cursorReply(ns: string, batch: Batch, field: "firstBatch" | "nextBatch"): Document {
  return { cursor: { [field]: batch.docs, id: batch.id, ns }, ok: 1 };
}

export function ns(ctx: CommandContext, coll: string): string {
  return `${ctx.db}.${coll}`;
}

/** Fields any command may carry that say nothing about what it acts on (sessions, concerns, API version...). */
export const GENERIC_COMMAND_FIELDS: ReadonlySet<string> = new Set([
  "lsid",
  "txnNumber",
  "writeConcern",
  "readConcern",
  "comment",
  "apiVersion",
  "apiStrict",
  "apiDeprecationErrors",
  "maxTimeMS",
  "$clusterTime",
  "$db",
  "$readPreference",
]);
