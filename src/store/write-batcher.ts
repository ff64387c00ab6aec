// Group commit for single-document writes: writes requested in the same event-loop turn go to the database in
// one command (a raw insert or update, unordered), and each caller still gets its own document's outcome.
// Each document's write stays atomic on its own, exactly as with insertOne or updateOne; what is saved is the
// per-command cost, which dominates small writes.
import { type Db, type Document, ObjectId, type UpdateOneModel } from "mongodb";
import { TurnBatch } from "../lib/turn-batch.ts";
import { isDuplicateKeyError } from "./database.ts";

/** A write error of one document of a batch (for example a duplicate key, code 11000). */
export interface DocumentWriteError {
  code: number;
  keyPattern?: Record<string, unknown>;
  message: string;
}

/**
 * Statements per command of the batched writers: a batch's single-document writes (a ledger write, a projection, an
 * Idempotency-Key's record) stay under a few KiB each, so a command of this many stays far under the 16 MiB limit.
 */
const WRITES_PER_COMMAND = 500;

/** What one write of a batch came to: its own write error, if any, and whether every update of its batch matched. */
interface BatchOutcome {
  error: DocumentWriteError | null;
  batchMatched: boolean;
}

/**
 * Writes of one event-loop turn as raw commands (rawWrites): `command` is the update or insert of these items'
 * statements (`statementOf`). A batch matched when no statement failed and, for updates, the replies count as many
 * matched as there were items. A batch's document errors are each its own write's outcome; any other failure fails
 * them all.
 */
function writeBatcher<T>(
  db: Db,
  collection: string,
  command: "update" | "insert",
  statementOf: (item: T) => Document,
  options: { oneAtATime?: boolean; maxItems?: number } = {},
): TurnBatch<T, BatchOutcome> {
  return new TurnBatch<T, BatchOutcome>(async (items) => {
    const { n, writeErrors } = await rawWrites(db, command, collection, items.map(statementOf), WRITES_PER_COMMAND);
    const errors: (DocumentWriteError | null)[] = new Array(items.length).fill(null);
    for (const { index, code, errmsg } of writeErrors) errors[index] = { code, message: errmsg ?? "write error" };
    const batchMatched = writeErrors.length === 0 && (command === "insert" || n === items.length);
    return errors.map((error) => ({ error, batchMatched }));
  }, options);
}

/** An updateOne, as a statement of the `update` command. */
function updateStatement<T extends Document>({ updateOne }: { updateOne: UpdateOneModel<T> }): Document {
  const { filter, update, upsert, arrayFilters, collation, hint } = updateOne;
  return {
    q: filter,
    u: update,
    ...(upsert ? { upsert: true } : {}),
    ...(arrayFilters ? { arrayFilters } : {}),
    ...(collation ? { collation } : {}),
    ...(hint ? { hint } : {}),
  };
}

/**
 * insertOne, batched. A document without an `_id` gets one here, as the driver's insert gives it. The reply names
 * no index of a duplicate key; with `explainDuplicates`, such a document is tried again alone, so its error says
 * which key (`keyPattern`).
 */
export function batchedInsert<T extends Document>(
  db: Db,
  collection: string,
  options: { explainDuplicates?: boolean } = {},
): (doc: T) => Promise<DocumentWriteError | null> {
  const batcher = writeBatcher<T>(db, collection, "insert", (doc) => {
    (doc as Document)._id ??= new ObjectId();
    return doc;
  });
  return async (doc) => {
    const { error } = await batcher.add(doc);
    if (!isDuplicateKeyError(error) || !options.explainDuplicates) return error;
    try {
      await db.collection(collection).insertOne(doc);
      return null;
    } catch (single) {
      const { code, keyPattern, message } = single as { code?: unknown; keyPattern?: Record<string, unknown>; message: string };
      if (code !== 11000) throw single;
      return { code, message, ...(keyPattern ? { keyPattern } : {}) };
    }
  };
}

/** updateOne, batched (the count of matched documents is not reported). */
export function batchedUpdate<T extends Document>(
  db: Db,
  collection: string,
): (operation: { updateOne: UpdateOneModel<T> }) => Promise<DocumentWriteError | null> {
  const batcher = writeBatcher<{ updateOne: UpdateOneModel<T> }>(db, collection, "update", updateStatement);
  return async (operation) => (await batcher.add(operation)).error;
}

/**
 * Conditional updateOne, batched. The update command reports how many of its updates matched, not which: when all
 * of a batch matched (the common case) each resolves "applied"; otherwise "unknown", and the caller reads to tell.
 * A write error of its own is thrown. With `oneAtATime`, one batch is written at a time, and with `maxItems` each holds
 * at most that many (see TurnBatch).
 */
export function batchedConditionalUpdate<T extends Document>(
  db: Db,
  collection: string,
  options: { oneAtATime?: boolean; maxItems?: number } = {},
): (operation: { updateOne: UpdateOneModel<T> }) => Promise<"applied" | "unknown"> {
  const batcher = writeBatcher<{ updateOne: UpdateOneModel<T> }>(db, collection, "update", updateStatement, options);
  return async (operation) => {
    const { error, batchMatched } = await batcher.add(operation);
    if (error) throwDocumentError(error);
    return batchMatched ? "applied" : "unknown";
  };
}

/** Throws a document's write error as the driver would for a single write (code, keyPattern, message). */
export function throwDocumentError(error: DocumentWriteError): never {
  throw Object.assign(new Error(error.message), { code: error.code, keyPattern: error.keyPattern });
}

/** For inserts whose duplicate means "already there": throws any other write error of the document. */
export function throwUnlessDuplicate(error: DocumentWriteError | null | undefined): void {
  if (error && !isDuplicateKeyError(error)) throwDocumentError(error);
}

/** One update of `rawUpdates`: its filter and update, as the `update` command takes them. */
export interface RawUpdate {
  q: Document;
  u: Document;
}

interface RawWriteError {
  index: number;
  code: number;
  errmsg?: string;
}

/**
 * The write concern the driver's own writes would carry (MONGODB_URI's `w`, `journal`, `wtimeoutMS`), which a raw
 * command gets only when it names it; none given, the server's default applies to both.
 */
function writeConcernOf(db: Db): { writeConcern?: Document } {
  const concern = db.writeConcern;
  if (concern === undefined) return {};
  const { w, journal, wtimeoutMS } = concern;
  return {
    writeConcern: {
      ...(w !== undefined ? { w } : {}),
      ...(journal !== undefined ? { j: journal } : {}),
      ...(wtimeoutMS !== undefined ? { wtimeout: wtimeoutMS } : {}),
    },
  };
}

/** The field of each write command that holds its statements. */
const STATEMENTS_FIELD = { update: "updates", insert: "documents", delete: "deletes" } as const;

/**
 * Unordered writes as raw commands (`update`, `insert` or `delete`), at most `perCommand` statements in each,
 * sent at once. The driver's bulk writes compute every operation's BSON size before serializing it, to split a
 * batch at the server's limits: that costs about as much as the serialization itself. A raw command is serialized
 * once, so the caller bounds its size instead (`perCommand` statements of the largest size it writes stay under
 * the 16 MiB of a command). Answers the documents the statements matched (updates) or inserted, and the write
 * errors with their indexes into `statements`; a write concern error is thrown. The driver retries its own write
 * helpers once after a network error or a failover (retryable writes), never a command: such a failure reaches the
 * caller, whose write must tell on its next try whether it applied (a ledger move's token, a delivery's lease, an
 * insert's duplicate key).
 */
async function rawWrites(
  db: Db,
  command: keyof typeof STATEMENTS_FIELD,
  collection: string,
  statements: readonly Document[],
  perCommand: number,
): Promise<{ n: number; writeErrors: RawWriteError[] }> {
  const field = STATEMENTS_FIELD[command];
  const writeConcern = writeConcernOf(db);
  const sent: Promise<Document>[] = [];
  for (let start = 0; start < statements.length; start += perCommand) {
    const statementsOfCommand = statements.slice(start, start + perCommand);
    sent.push(db.command({ [command]: collection, [field]: statementsOfCommand, ordered: false, ...writeConcern }));
  }
  let n = 0;
  const writeErrors: RawWriteError[] = [];
  (await Promise.all(sent)).forEach((reply, i) => {
    if (reply.writeConcernError) throw Object.assign(new Error(String(reply.writeConcernError.errmsg)), reply.writeConcernError);
    n += Number(reply.n ?? 0);
    for (const error of (reply.writeErrors as RawWriteError[] | undefined) ?? []) writeErrors.push({ ...error, index: error.index + i * perCommand });
  });
  return { n, writeErrors };
}

/** A write error of a raw write, thrown as the driver would throw a bulk write's (code, writeErrors). */
function rawWriteFailure(writeErrors: RawWriteError[]): Error {
  const [first] = writeErrors;
  return Object.assign(new Error(first!.errmsg ?? "write error"), { code: first!.code, writeErrors });
}

/**
 * Unordered single-document updates as raw `update` commands (see rawWrites). Answers how many matched a document;
 * a write error of any update is thrown, as bulkWrite would.
 */
export async function rawUpdates(db: Db, collection: string, updates: readonly RawUpdate[], perCommand: number): Promise<number> {
  const { n, writeErrors } = await rawWrites(db, "update", collection, updates, perCommand);
  if (writeErrors.length > 0) throw rawWriteFailure(writeErrors);
  return n;
}

/** One delete of `rawDeletes`: its filter, and 0 (every match) or 1, as the `delete` command takes them. */
export interface RawDelete {
  q: Document;
  limit: 0 | 1;
}

/** Unordered deletes as raw `delete` commands (see rawWrites); a write error of any is thrown. */
export async function rawDeletes(db: Db, collection: string, deletes: readonly RawDelete[], perCommand: number): Promise<void> {
  const { writeErrors } = await rawWrites(db, "delete", collection, deletes, perCommand);
  if (writeErrors.length > 0) throw rawWriteFailure(writeErrors);
}

/**
 * Unordered inserts as raw `insert` commands (see rawWrites), each document once: answers the indexes of the
 * documents refused as duplicate keys (they exist already); any other write error is thrown.
 */
export async function rawInsertsOnce(db: Db, collection: string, documents: readonly Document[], perCommand: number): Promise<Set<number>> {
  const { writeErrors } = await rawWrites(db, "insert", collection, documents, perCommand);
  if (!writeErrors.every(isDuplicateKeyError)) throw rawWriteFailure(writeErrors);
  return new Set(writeErrors.map((e) => e.index));
}
