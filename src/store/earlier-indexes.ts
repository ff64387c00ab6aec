// Indexes an earlier version made and a later one replaced: dropped at start, since every index left costs every
// write its maintenance whether a query reads it or not.
import { type Collection, type Document, MongoServerError } from "mongodb";

const NAMESPACE_NOT_FOUND = 26;
const INDEX_NOT_FOUND = 27;

/** Drops those of `names` the collection has; a collection not created yet has none. */
export async function dropIndexesIfPresent<T extends Document>(collection: Collection<T>, names: readonly string[]): Promise<void> {
  let present: string[];
  try {
    present = (await collection.indexes()).map((index) => String(index.name));
  } catch (error) {
    if (error instanceof MongoServerError && error.code === NAMESPACE_NOT_FOUND) return;
    throw error;
  }
  for (const name of names) {
    if (!present.includes(name)) continue;
    try {
      await collection.dropIndex(name);
    } catch (error) {
      // Dropped meanwhile by another process starting.
      if (!(error instanceof MongoServerError && (error.code === INDEX_NOT_FOUND || error.code === NAMESPACE_NOT_FOUND))) throw error;
    }
  }
}
