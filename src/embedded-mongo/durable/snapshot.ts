// Snapshots: the whole store in one file, written to a temporary file, fsync'ed, then renamed over the previous
// snapshot, so a crash leaves either the old or the new one. It is written in slices between commands (the
// server keeps serving); records journaled after its start are replayed on top of it at start-up.
import { closeSync, fsync, openSync, renameSync, write } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import type { Document, Timestamp } from "bson";
import { serialize } from "bson";
import { RecordType, encode, encodeSession } from "./durable-records.ts";
import { syncDirectory } from "./journal.ts";
import { frameRecord } from "./record-file.ts";
import type { Sessions } from "../replication/sessions.ts";
import type { Store } from "../storage/store.ts";

export const SNAPSHOT_FILE = "snapshot.bson";
const SLICE_DOCUMENTS = 2000;
const writeAsync = (fd: number, buffer: Buffer): Promise<number> =>
  new Promise((resolve, reject) => write(fd, buffer, (err, n) => (err ? reject(err) : resolve(n))));
const fsyncAsync = promisify(fsync);

export async function writeSnapshot(dir: string, store: Store, sessions: Sessions, seq: number, ts: Timestamp): Promise<void> {
  const tmp = path.join(dir, `${SNAPSHOT_FILE}.tmp`);
  const fd = openSync(tmp, "w");
  let chunk: Buffer[] = [];
  let chunkBytes = 0;
  const push = (type: number, payload: Uint8Array) => {
    const rec = frameRecord(type, payload);
    chunk.push(rec);
    chunkBytes += rec.length;
  };
  // Written between slices, without blocking the server's event loop.
  const flush = async () => {
    if (chunkBytes === 0) return;
    const buf = Buffer.concat(chunk, chunkBytes);
    chunk = [];
    chunkBytes = 0;
    let written = 0;
    while (written < buf.length) written += await writeAsync(fd, buf.subarray(written));
  };
  try {
    push(RecordType.SnapshotHeader, encode({ format: 1, seq, ts }));
    let collections = 0;
    let documents = 0;
    // Namespaces and last record ids as they were at the start (seq): a rename while the snapshot is written is
    // in the journal after it, and its replay moves the collection then; documents inserted after the start are
    // in the journal too, so the snapshot stops there instead of chasing new inserts.
    const namespaces = [...store.databases].flatMap(([db, colls]) => [...colls].map(([name, coll]) => ({ db, name, coll, lastRid: coll.lastRid })));
    for (const { db, name, coll, lastRid } of namespaces) {
      const indexes: Document[] = coll.indexes.slice(1).map((i) => i.spec);
      push(RecordType.Collection, encode({ db, coll: name, uuid: coll.uuid, options: coll.options, indexes }));
      collections++;
      let slice = 0;
      // Map iteration tolerates writes between slices; the journal replay settles what changed meanwhile.
      for (const [rid, doc] of coll.docs) {
        if (rid > lastRid) break;
        push(RecordType.Document, serialize(doc, { checkKeys: false, ignoreUndefined: false }));
        documents++;
        if (++slice >= SLICE_DOCUMENTS) {
          slice = 0;
          await flush();
        }
      }
    }
    for (const record of sessions.records()) push(RecordType.Session, encodeSession(record));
    push(RecordType.SnapshotEnd, encode({ collections, documents }));
    await flush();
    await fsyncAsync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path.join(dir, SNAPSHOT_FILE));
  syncDirectory(dir);
}
