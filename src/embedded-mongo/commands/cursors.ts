// Open cursors: Int64 ids, batching by count and by the 16 MiB reply limit, idle reaping.
import { calculateObjectSize, Long, type Document } from "bson";
import { commandError, ErrorCodes } from "../bson/errors.ts";

/** mongod's first-batch default when the client gives no batchSize. */
export const DEFAULT_FIRST_BATCH = 101;
// Leave headroom under the 16 MiB BSON limit for the reply envelope.
const MAX_BATCH_BYTES = 16 * 1024 * 1024 - 16 * 1024;

interface OpenCursor {
  id: Long;
  ns: string;
  docs: Document[];
  position: number;
  lastUsed: number;
  project?: ((doc: Document) => Document) | undefined;
}

export interface Batch {
  docs: Document[];
  /** 0 when the cursor is exhausted (or was never opened). */
  id: Long;
}

export class CursorRegistry {
  private readonly open = new Map<string, OpenCursor>();

  constructor(private readonly idleTimeoutMs: number) {}

  get size(): number {
    return this.open.size;
  }

  /**
   * Returns the first batch of `docs`; the rest stays behind an Int64 cursor id unless `singleBatch`.
   * `project` is applied lazily, batch by batch, so a large result is not projected up front.
   */
  openCursor(ns: string, docs: Document[], batchSize: number | undefined, singleBatch: boolean, project?: (doc: Document) => Document): Batch {
    const first = takeBatch(docs, 0, batchSize ?? DEFAULT_FIRST_BATCH, project);
    if (singleBatch || first.length >= docs.length) return { docs: first, id: Long.ZERO };
    let id: Long;
    do {
      // Positive 63-bit ids, like mongod's; random so they cannot be guessed across clients.
      id = Long.fromBits((Math.random() * 0x100000000) | 0, (Math.random() * 0x7fffffff) | 0);
    } while (id.isZero() || this.open.has(id.toString()));
    this.open.set(id.toString(), { id, ns, docs, position: first.length, lastUsed: Date.now(), project });
    return { docs: first, id };
  }

  isOpen(id: Long): boolean {
    return this.open.has(id.toString());
  }

  getMore(id: Long, ns: string, batchSize: number | undefined): Batch {
    const key = id.toString();
    const cursor = this.open.get(key);
    if (!cursor) throw commandError(ErrorCodes.CursorNotFound, `cursor id ${key} not found`);
    if (cursor.ns !== ns) {
      throw commandError(ErrorCodes.Unauthorized, `Requested getMore on namespace '${ns}', but cursor belongs to a different namespace ${cursor.ns}`);
    }
    const batch = takeBatch(cursor.docs, cursor.position, batchSize && batchSize > 0 ? batchSize : Infinity, cursor.project);
    cursor.position += batch.length;
    cursor.lastUsed = Date.now();
    if (cursor.position >= cursor.docs.length) {
      this.open.delete(key);
      return { docs: batch, id: Long.ZERO };
    }
    return { docs: batch, id: cursor.id };
  }

  kill(ids: Long[]): { killed: Long[]; notFound: Long[] } {
    const killed: Long[] = [];
    const notFound: Long[] = [];
    for (const id of ids) {
      if (this.open.delete(id.toString())) killed.push(id);
      else notFound.push(id);
    }
    return { killed, notFound };
  }

  /** Drops cursors idle for longer than the timeout (mongod: cursorTimeoutMillis, 10 minutes). */
  reap(now = Date.now()): number {
    let reaped = 0;
    for (const [key, cursor] of this.open) {
      if (now - cursor.lastUsed > this.idleTimeoutMs) {
        this.open.delete(key);
        reaped++;
      }
    }
    return reaped;
  }

  clear(): void {
    this.open.clear();
  }
}

function takeBatch(docs: Document[], from: number, count: number, project?: (doc: Document) => Document): Document[] {
  const out: Document[] = [];
  let bytes = 0;
  for (let i = from; i < docs.length && out.length < count; i++) {
    const source = docs[i]!;
    const doc = project ? project(source) : source;
    const size = calculateObjectSize(doc);
    // A batch always carries at least one document, as with mongod.
    if (out.length > 0 && bytes + size > MAX_BATCH_BYTES) break;
    bytes += size;
    out.push(doc);
  }
  return out;
}
