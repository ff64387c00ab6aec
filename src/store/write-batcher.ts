// Group commit for single-document writes: writes requested in the same event-loop turn go to the database in
// one command (insertMany or bulkWrite, unordered), and each caller still gets its own document's outcome.
// Each document's write stays atomic on its own, exactly as with insertOne or updateOne; what is saved is the
// per-command cost, which dominates small writes.
import type { AnyBulkWriteOperation, Collection, Document, UpdateOneModel } from "mongodb";
import { bulkWriteErrors } from "./database.ts";

/** A write error of one document of a batch (for example a duplicate key, code 11000). */
export interface DocumentWriteError {
  code: number;
  keyPattern?: Record<string, unknown>;
  message: string;
}

interface Pending<T> {
  item: T;
  settle: (outcome: BatchOutcome) => void;
  fail: (error: unknown) => void;
}

/** Per-index write errors of an unordered batch; rethrows anything that is not a batch of document errors. */
function documentErrors(error: unknown, size: number): (DocumentWriteError | null)[] {
  const writeErrors = bulkWriteErrors(error);
  if (!writeErrors) throw error;
  const outcomes: (DocumentWriteError | null)[] = new Array(size).fill(null);
  for (const writeError of writeErrors) {
    outcomes[writeError.index] = { code: writeError.code, message: writeError.errmsg ?? "write error" };
  }
  return outcomes;
}

/** What one write of a batch came to: its own write error, if any, and whether every update of its batch matched. */
interface BatchOutcome {
  error: DocumentWriteError | null;
  batchMatched: boolean;
}

class WriteBatcher<T> {
  private pending: Pending<T>[] = [];

  /** `writeAll` answers whether every write matched a document (inserts: true). */
  constructor(private readonly writeAll: (items: T[]) => Promise<boolean>) {}

  write(item: T): Promise<BatchOutcome> {
    return new Promise((settle, fail) => {
      if (this.pending.push({ item, settle, fail }) === 1) setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    try {
      const batchMatched = await this.writeAll(batch.map((p) => p.item));
      for (const p of batch) p.settle({ error: null, batchMatched });
    } catch (error) {
      let outcomes: (DocumentWriteError | null)[];
      try {
        outcomes = documentErrors(error, batch.length);
      } catch (fatal) {
        for (const p of batch) p.fail(fatal);
        return;
      }
      batch.forEach((p, i) => p.settle({ error: outcomes[i]!, batchMatched: false }));
    }
  }
}

/**
 * insertOne, batched. The driver reports a batch's duplicate keys without the index they hit; with
 * `explainDuplicates`, such a document is tried again alone, so its error says which key (`keyPattern`).
 */
export function batchedInsert<T extends Document>(
  collection: Collection<T>,
  options: { explainDuplicates?: boolean } = {},
): (doc: T) => Promise<DocumentWriteError | null> {
  const batcher = new WriteBatcher<T>(async (docs) => {
    await collection.insertMany(docs as never[], { ordered: false });
    return true;
  });
  return async (doc) => {
    const { error } = await batcher.write(doc);
    if (error?.code !== 11000 || !options.explainDuplicates) return error;
    try {
      await collection.insertOne(doc as never);
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
  collection: Collection<T>,
): (operation: AnyBulkWriteOperation<T>) => Promise<DocumentWriteError | null> {
  const batcher = new WriteBatcher<AnyBulkWriteOperation<T>>(async (operations) => {
    await collection.bulkWrite(operations, { ordered: false });
    return true;
  });
  return async (operation) => (await batcher.write(operation)).error;
}

/**
 * Conditional updateOne, batched. The update command reports how many of its updates matched, not which: when all
 * of a batch matched (the common case) each resolves "applied"; otherwise "unknown", and the caller reads to tell.
 * A write error of its own is thrown.
 */
export function batchedConditionalUpdate<T extends Document>(
  collection: Collection<T>,
): (operation: { updateOne: UpdateOneModel<T> }) => Promise<"applied" | "unknown"> {
  const batcher = new WriteBatcher<{ updateOne: UpdateOneModel<T> }>(async (operations) => {
    const result = await collection.bulkWrite(operations, { ordered: false });
    return result.matchedCount === operations.length;
  });
  return async (operation) => {
    const { error, batchMatched } = await batcher.write(operation);
    if (error) throwDocumentError(error);
    return batchMatched ? "applied" : "unknown";
  };
}

/** Throws a document's write error as the driver would for a single write (code, keyPattern, message). */
export function throwDocumentError(error: DocumentWriteError): never {
  throw Object.assign(new Error(error.message), { code: error.code, keyPattern: error.keyPattern });
}
