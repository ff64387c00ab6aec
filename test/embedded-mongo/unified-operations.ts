// Operations of the unified test runner that map onto less common driver APIs: the client-level bulkWrite
// (clientBulkWrite), command cursors (runCursorCommand, createCommandCursor) and Atlas Search index management.
import type { ClientSession, Collection, Db, Document, MongoClient, RunCommandCursor } from "mongodb";

/**
 * clientBulkWrite: the unified format's models (`{insertOne: {namespace, document}}`, ...) become the driver's
 * (`{name: "insertOne", namespace, document}`); the other arguments are the options.
 */
export function clientBulkWrite(client: MongoClient, args: Document, options: Document): Promise<unknown> {
  const models = (args.models as Document[]).map((model) => {
    const [name, fields] = Object.entries(model)[0] as [string, Document];
    return { name, ...fields };
  });
  return client.bulkWrite(models as unknown as Parameters<MongoClient["bulkWrite"]>[0], options);
}

function mapToDocument(map: unknown): unknown {
  return map instanceof Map ? Object.fromEntries([...map].map(([k, v]) => [String(k), v])) : map;
}

/** Whether a result is the driver's ClientBulkWriteResult (its per-model results are Maps keyed by model index). */
export function isClientBulkWriteResult(r: Document): boolean {
  return "insertedCount" in r && "upsertedCount" in r && !("upsertedIds" in r) && "acknowledged" in r;
}

/** A ClientBulkWriteResult as the unified format describes it: the verbose results as documents keyed by index. */
export function normalizeClientBulkWriteResult(r: Document): Document {
  const out: Document = {
    insertedCount: r.insertedCount,
    upsertedCount: r.upsertedCount,
    matchedCount: r.matchedCount,
    modifiedCount: r.modifiedCount,
    deletedCount: r.deletedCount,
  };
  for (const key of ["insertResults", "updateResults", "deleteResults"]) {
    if (r[key] !== undefined) out[key] = mapToDocument(r[key]);
  }
  return out;
}

/** A MongoClientBulkWriteError's writeErrors (a Map keyed by model index) as a document, for expectError.writeErrors. */
export function clientBulkWriteErrors(err: unknown): Document | undefined {
  const writeErrors = (err as { writeErrors?: unknown } | undefined)?.writeErrors;
  return writeErrors instanceof Map ? (mapToDocument(writeErrors) as Document) : undefined;
}

/**
 * runCursorCommand (all documents of the cursor, running getMores) and createCommandCursor (the cursor, its
 * command already run: hasNext reads the first batch without consuming it).
 */
export async function commandCursorOperation(
  db: Db,
  name: "runCursorCommand" | "createCommandCursor",
  args: Document,
  session: ClientSession | undefined,
): Promise<unknown> {
  const cursorType = args.cursorType as string | undefined;
  const cursor: RunCommandCursor = db.runCursorCommand(args.command as Document, {
    ...(args.readPreference ? { readPreference: args.readPreference } : {}),
    ...(session ? { session } : {}),
    ...(cursorType === "tailable" || cursorType === "tailableAwait" ? { tailable: true } : {}),
    ...(cursorType === "tailableAwait" ? { awaitData: true } : {}),
  });
  if (args.batchSize !== undefined) cursor.setBatchSize(Number(args.batchSize));
  if (args.maxTimeMS !== undefined) cursor.setMaxTimeMS(Number(args.maxTimeMS));
  if (args.comment !== undefined) cursor.setComment(args.comment);
  if (name === "runCursorCommand") return cursor.toArray();
  await cursor.hasNext();
  return cursor;
}

/** The search index operations on a collection; undefined when `name` is not one. */
export async function searchIndexOperation(c: Collection, name: string, args: Document): Promise<{ result: unknown } | undefined> {
  switch (name) {
    case "createSearchIndex":
      return { result: await c.createSearchIndex(args.model as Parameters<Collection["createSearchIndex"]>[0]) };
    case "createSearchIndexes":
      return { result: await c.createSearchIndexes(args.models as Parameters<Collection["createSearchIndexes"]>[0]) };
    case "dropSearchIndex":
      return { result: await c.dropSearchIndex(args.name as string) };
    case "updateSearchIndex":
      return { result: await c.updateSearchIndex(args.name as string, args.definition as Document) };
    case "listSearchIndexes": {
      const options = (args.aggregationOptions as Document | undefined) ?? {};
      const cursor = args.name === undefined ? c.listSearchIndexes(options) : c.listSearchIndexes(args.name as string, options);
      return { result: await cursor.toArray() };
    }
    default:
      return undefined;
  }
}
