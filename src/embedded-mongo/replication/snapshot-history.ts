// The store as it was at a past cluster time, rebuilt from the oplog: what snapshot reads and transactions read.
//
// No extra history is kept for this: the oplog already holds, for each write, the document before it (updates
// and deletes keep a reference to the stored object, which is never mutated: writes swap in new objects). A read
// at time T takes the collection as it is now and, for every document written after T, puts back the version
// it had at T (the image before the first write after T; absent if that write inserted it). A collection no
// write touched since T is read as it is, at no cost. History reaches back to the oldest retained oplog entry,
// at most `SNAPSHOT_HISTORY_WINDOW_SECONDS` (mongod's minSnapshotHistoryWindowInSeconds), and not before the
// server started (entries replayed from the journal do not keep before-images).
import { EJSON, type Long, Timestamp, type Document } from "bson";
import { plainNumbers } from "../bson/numbers.ts";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import type { Collection } from "../storage/collection.ts";
import type { Store } from "../storage/store.ts";
import { compareTimestamps, type Oplog } from "./oplog.ts";

/** mongod's default minSnapshotHistoryWindowInSeconds. */
export const SNAPSHOT_HISTORY_WINDOW_SECONDS = 300;

function timestampText(ts: Timestamp): string {
  return `Timestamp(${ts.high >>> 0}, ${ts.low >>> 0})`;
}

function isTimestamp(v: unknown): v is Timestamp {
  return (v as { _bsontype?: string } | null)?._bsontype === "Timestamp";
}

/**
 * The cluster time a snapshot read runs at (undefined when the command does not ask for one): its
 * `atClusterTime`, else the newest write's. A time after the cluster time answers 72, one older than the kept
 * history 239 SnapshotTooOld, as mongod does.
 */
export function snapshotReadTime(cmd: Document, server: { replSet?: unknown; oplog: Oplog }): Timestamp | undefined {
  const readConcern = cmd.readConcern as Document | undefined;
  if (readConcern?.level !== "snapshot") return undefined;
  if (!server.replSet) throw commandError(ErrorCodes.NotAReplicaSet, "node needs to be a replica set member to use read concern");
  const oplog = server.oplog;
  const at = readConcern.atClusterTime;
  if (at === undefined) return oplog.lastTimestamp;
  if (!isTimestamp(at)) throw commandError(ErrorCodes.TypeMismatch, "BSON field 'atClusterTime' is the wrong type, expected type 'timestamp'");
  if (at.high >>> 0 === 0 && at.low >>> 0 === 0) throw commandError(ErrorCodes.InvalidOptions, "atClusterTime cannot be a null timestamp");
  const now = oplog.lastTimestamp;
  if (compareTimestamps(at, now) > 0) {
    throw commandError(
      ErrorCodes.InvalidOptions,
      `readConcern atClusterTime value must not be greater than the current clusterTime. Requested clusterTime: ${timestampText(at)}; current clusterTime: ${timestampText(now)}`,
    );
  }
  if (compareTimestamps(at, oldestSnapshotTime(oplog)) < 0) {
    throw commandError(ErrorCodes.SnapshotTooOld, `Read timestamp ${timestampText(at)} is older than the oldest available timestamp.`);
  }
  return at;
}

/** The oldest time a snapshot read may ask for. */
export function oldestSnapshotTime(oplog: Oplog): Timestamp {
  const windowStart = new Timestamp({ t: Math.max(0, Math.floor(Date.now() / 1000) - SNAPSHOT_HISTORY_WINDOW_SECONDS), i: 0 });
  const start = oplog.snapshotHistoryStart;
  return compareTimestamps(start, windowStart) > 0 ? start : windowStart;
}

/**
 * db.name as it was at `ts`: the live collection itself when nobody wrote it since, else a copy (sharing what did not
 * change: see Collection.copy) with every document written since put back as it was at `ts`, indexes included. A
 * collection created, dropped or renamed since `ts` answers 246 SnapshotUnavailable, as mongod before 7.0's
 * point-in-time catalog.
 */
export function collectionAt(live: Store, oplog: Oplog, ts: Timestamp, db: string, name: string): Collection | undefined {
  const current = live.get(db, name);
  // The first write of each document after ts decides its version at ts: its _id and the document (null: absent).
  const before = new Map<string, { id: unknown; doc: Document | null }>();
  for (let seq = oplog.seqAtOrAfter(ts); seq <= oplog.lastSeq; seq++) {
    const entry = oplog.bySeq(seq);
    if (!entry || compareTimestamps(entry.ts, ts) <= 0) continue;
    if (entry.op === "c") {
      if (catalogChange(entry as CatalogEntry, db, name)) {
        throw commandError(
          ErrorCodes.SnapshotUnavailable,
          `Unable to read from a snapshot due to pending collection catalog changes; please retry the operation. Snapshot timestamp is ${timestampText(ts)}. Collection minimum is ${timestampText(entry.ts)}`,
        );
      }
      continue;
    }
    if (entry.db !== db || entry.coll !== name) continue;
    const doc = entry.op === "i" ? entry.doc : entry.pre;
    if (!doc) continue;
    const key = documentKey(doc._id);
    if (before.has(key)) continue;
    before.set(key, { id: doc._id, doc: entry.op === "i" ? null : (entry.pre ?? null) });
  }
  if (before.size === 0 || !current) return current;
  const copy = current.copy();
  copy.rewind([...before.values()].map(({ id, doc }) => ({ rid: copy.ridsById(id)[0], doc })));
  return copy;
}

/** A namespace command as the oplog records it (a rename names its target too). */
interface CatalogEntry {
  db: string;
  cmd: string;
  coll?: string;
  toDb?: string;
  to?: string;
}

/** Whether the entry created, dropped or renamed db.name (or dropped its database). */
function catalogChange(entry: CatalogEntry, db: string, name: string): boolean {
  if (entry.cmd === "rename" && entry.toDb === db && entry.to === name) return true;
  if (entry.db !== db) return false;
  return entry.cmd === "dropDatabase" || ((entry.cmd === "create" || entry.cmd === "drop" || entry.cmd === "rename") && entry.coll === name);
}

/** A string that is equal for equal `_id` values of the common types (numbers of any width compare equal). */
export function documentKey(id: unknown): string {
  if (typeof id === "string") return `s${id}`;
  if (typeof id === "number") return `n${Object.is(id, -0) ? 0 : id}`;
  const type = (id as { _bsontype?: string } | null)?._bsontype;
  if (type === "Long" && !Number.isSafeInteger((id as Long).toNumber())) return `n${String(id)}`;
  if (type === "ObjectId") return `o${(id as { toHexString(): string }).toHexString()}`;
  if (type === "Long" || type === "Int32" || type === "Double") return documentKey(plainNumbers(id));
  return `x${EJSON.stringify({ id }, { relaxed: false })}`;
}
