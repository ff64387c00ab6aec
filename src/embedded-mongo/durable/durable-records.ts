// What the journal and the snapshot store, as BSON payloads of framed records (record-file.ts), and how a
// store is rebuilt from them. Journal records carry whole documents (an update stores the document after it),
// so replaying a record twice, or over a snapshot that already holds it, gives the same state.
import { Long, serialize, type Binary, type Document, type Timestamp } from "bson";
import { decodeDocument } from "../bson/decode.ts";
import { compareValues } from "../query/bson-order.ts";
import { CollectionIndex } from "../storage/collection-index.ts";
import type { Collection } from "../storage/collection.ts";
import { updateDescriptionOf, type OplogEntry } from "../replication/oplog.ts";
import type { UpdateDescription } from "../query/update-description.ts";
import type { SessionRecord } from "../replication/sessions.ts";
import type { Store } from "../storage/store.ts";

export const RecordType = {
  /** Journal: one oplog entry. */
  Oplog: 1,
  /** Journal and snapshot: a retryable write's stored outcome. */
  Session: 2,
  /** Journal: a committed transaction, `{ops: [oplog entry, ...]}`: all its writes or, torn, none. */
  Transaction: 3,
  /** Snapshot: { format, seq, ts } — the journal records up to seq are contained in it. */
  SnapshotHeader: 10,
  /** Snapshot: { db, coll, options, indexes } — the documents that follow belong to it. */
  Collection: 11,
  /** Snapshot: one document (the payload is the document itself). */
  Document: 12,
  /** Snapshot: { collections, documents } — written last; a snapshot without it is incomplete. */
  SnapshotEnd: 13,
} as const;

const SERIALIZE_OPTIONS = { ignoreUndefined: false, checkKeys: false };

export function encode(doc: Document): Uint8Array {
  return serialize(doc, SERIALIZE_OPTIONS);
}

/** Same decoding as the wire: numbers keep their BSON types, as the server holds them. */
export function decode(payload: Uint8Array): Document {
  return decodeDocument(payload);
}

export function encodeEntry(entry: OplogEntry): Uint8Array {
  return encode(entryRecord(entry));
}

/** A committed transaction's entries as one journal record. */
export function encodeTransaction(entries: OplogEntry[]): Uint8Array {
  return encode({ ops: entries.map(entryRecord) });
}

/** The journal's document for one oplog entry. */
function entryRecord(entry: OplogEntry): Document {
  const head: Document = { s: entry.seq, t: entry.ts, w: entry.wall, op: entry.op, db: entry.db };
  // A transaction's write keeps its session and number, for the change events replayed after a restart.
  if (entry.lsid) Object.assign(head, { l: entry.lsid, n: entry.txnNumber });
  if (entry.op === "c") {
    const { seq: _s, ts: _t, wall: _w, op: _o, db: _d, lsid: _l, txnNumber: _n, ...command } = entry;
    return { ...head, ...command };
  }
  // The collection's UUID, and for a time-series collection a marker (its writes are not change events).
  const coll: Document = { c: entry.coll };
  if (entry.uuid) coll.ui = entry.uuid;
  if (entry.timeseries) coll.tsc = true;
  switch (entry.op) {
    case "i":
      return { ...head, ...coll, d: entry.doc };
    case "u": {
      // The update's description goes along, so change streams can still report it after a restart.
      if (entry.replacement) return { ...head, ...coll, d: entry.post, r: true };
      const { disambiguatedPaths, ...ud } = updateDescriptionOf(entry);
      return {
        ...head,
        ...coll,
        d: entry.post,
        ud: disambiguatedPaths && Object.keys(disambiguatedPaths).length ? { ...ud, disambiguatedPaths } : ud,
      };
    }
    case "d":
      // A time-series collection's _id is not unique: the whole document says which one went.
      return { ...head, ...coll, id: entry.pre._id, ...(entry.timeseries ? { dd: entry.pre } : {}) };
  }
}

export function encodeSession(record: SessionRecord): Uint8Array {
  return encode({ l: record.lsid, n: record.txnNumber, r: record.reply });
}

export function decodeSession(payload: Uint8Array): SessionRecord {
  const d = decode(payload);
  return { lsid: d.l as string, txnNumber: Number(d.n), reply: d.r as Document };
}

/**
 * Rebuilds a Store from snapshot and journal records. Secondary indexes are built once at the end: a snapshot
 * taken while writes went on may hold, for a moment of the replay, two documents that a unique index would
 * refuse together, which the later records resolve.
 */
export class StoreLoader {
  private readonly indexSpecs = new Map<Collection, Map<string, Document>>();
  lastSeq = 0;
  lastTs?: Timestamp;
  /** Time of the snapshot loaded (change stream history starts there). */
  snapshotTs?: Timestamp;

  collection(db: string, name: string, options: Document = {}, uuid?: Binary): Collection {
    let coll = this.store.get(db, name);
    if (!coll) {
      coll = this.store.create(db, name, options, uuid);
      this.indexSpecs.set(coll, new Map());
    }
    return coll;
  }

  addIndexSpec(coll: Collection, spec: Document): void {
    if (spec.name !== "_id_") this.indexSpecs.get(coll)!.set(spec.name as string, spec);
  }

  /** Inserts, or replaces the document with the same _id (only the _id index exists while loading). */
  put(coll: Collection, doc: Document): void {
    if (coll.timeseries) {
      // No unique _id, and no updates (refused): every record is a new document. Neither is replayed twice (the
      // snapshot holds only documents inserted before its seq).
      coll.insert(doc);
      return;
    }
    try {
      coll.insert(doc); // the common case: one probe of the _id index, not two
    } catch (err) {
      if ((err as { code?: number }).code !== 11000) throw err;
      coll.replace(coll.ridsById(doc._id)[0]!, doc);
    }
  }

  /** The newest journal records replayed (at most 2 x keepReplayed), for the oplog of the restarted server. */
  private readonly replayedRecords: Document[] = [];

  constructor(
    readonly store: Store,
    /** How many replayed records the oplog keeps (older ones are dropped as the replay goes). */
    private readonly keepReplayed = 100_000,
  ) {}

  /** Oplog entries of the newest replayed records, oldest first. */
  replayedEntries(): { entries: OplogEntry[]; droppedBefore: Timestamp | undefined } {
    const kept = this.replayedRecords.slice(-this.keepReplayed);
    const dropped = this.replayedRecords.length - kept.length;
    return { entries: kept.map(entryOf), droppedBefore: dropped > 0 ? (this.replayedRecords[dropped - 1]!.t as Timestamp) : this.droppedTs };
  }

  private droppedTs?: Timestamp;

  /** Applies one journaled oplog entry (skipped when the snapshot already contains it). */
  apply(payload: Uint8Array): void {
    this.applyRecord(decode(payload));
  }

  /** Applies the entries of one journaled transaction. */
  applyTransaction(payload: Uint8Array): void {
    for (const r of decode(payload).ops as Document[]) this.applyRecord(r);
  }

  private applyRecord(r: Document): void {
    const seq = Number(r.s);
    if (seq <= this.lastSeq) return;
    this.replayedRecords.push(r);
    if (this.replayedRecords.length >= 2 * this.keepReplayed) {
      this.droppedTs = this.replayedRecords[this.keepReplayed - 1]!.t as Timestamp;
      this.replayedRecords.splice(0, this.keepReplayed);
    }
    this.lastSeq = seq;
    this.lastTs = r.t as Timestamp;
    const db = r.db as string;
    switch (r.op) {
      case "i":
      case "u":
        this.put(this.collection(db, r.c as string, {}, r.ui as Binary | undefined), r.d as Document);
        return;
      case "d": {
        const coll = this.store.get(db, r.c as string);
        if (!coll) return;
        const whole = r.dd as Document | undefined;
        const rid = whole ? coll.ridsById(r.id).find((x) => compareValues(coll.docs.get(x), whole) === 0) : coll.ridsById(r.id)[0];
        if (rid !== undefined) coll.remove(rid);
        return;
      }
      case "c":
        this.applyCommand(db, r);
    }
  }

  private applyCommand(db: string, r: Document): void {
    switch (r.cmd) {
      case "create":
        this.collection(db, r.coll as string, r.options as Document, r.uuid as Binary | undefined);
        return;
      case "rename": {
        // Replayed over a snapshot that already holds the rename, the source is gone: nothing to do.
        if (!this.store.get(db, r.coll as string)) return;
        const target = this.store.get(r.toDb as string, r.to as string);
        if (target) {
          this.store.drop(r.toDb as string, r.to as string);
          this.indexSpecs.delete(target);
        }
        this.store.rename(db, r.coll as string, r.toDb as string, r.to as string, false);
        return;
      }
      case "drop": {
        const coll = this.store.drop(db, r.coll as string);
        if (coll) this.indexSpecs.delete(coll);
        return;
      }
      case "dropDatabase":
        for (const coll of this.store.databases.get(db)?.values() ?? []) this.indexSpecs.delete(coll);
        this.store.dropDatabase(db);
        return;
      case "createIndex":
        this.addIndexSpec(this.collection(db, r.coll as string), r.spec as Document);
        return;
      case "collMod": {
        const coll = this.store.get(db, r.coll as string);
        if (!coll) return;
        for (const key of Object.keys(coll.options)) delete coll.options[key];
        Object.assign(coll.options, r.options as Document);
        const specs = this.indexSpecs.get(coll)!;
        for (const spec of r.indexes as Document[]) if (specs.has(spec.name as string)) specs.set(spec.name as string, spec);
        return;
      }
      case "dropIndex": {
        const coll = this.store.get(db, r.coll as string);
        if (coll) this.indexSpecs.get(coll)?.delete(r.name as string);
        return;
      }
    }
  }

  /** Builds the secondary indexes; a failure means the files do not describe a consistent state. */
  finish(): Store {
    for (const [coll, specs] of this.indexSpecs) {
      for (const spec of specs.values()) {
        try {
          coll.addIndex(new CollectionIndex(spec));
        } catch (err) {
          throw new Error(`cannot rebuild index ${spec.name} of ${coll.ns} from the journal: ${(err as Error).message}`);
        }
      }
    }
    return this.store;
  }
}

/** The oplog entry a journal record describes (documents before writes are not journaled, images are off). */
function entryOf(r: Document): OplogEntry {
  const base = {
    seq: Number(r.s),
    ts: r.t as Timestamp,
    wall: (r.w as Date | undefined) ?? new Date(0),
    db: r.db as string,
    ...(r.l ? { lsid: r.l as Document, txnNumber: Long.fromValue(r.n as number) } : {}),
  };
  const coll = { coll: r.c as string, uuid: r.ui as Binary | undefined, ...(r.tsc === true ? { timeseries: true } : {}) };
  switch (r.op) {
    case "i":
      return { ...base, op: "i", ...coll, doc: r.d as Document, images: false };
    case "u":
      return {
        ...base,
        op: "u",
        ...coll,
        post: r.d as Document,
        replacement: r.r === true,
        description: r.ud as UpdateDescription | undefined,
        images: false,
      };
    case "d":
      return { ...base, op: "d", ...coll, pre: (r.dd as Document | undefined) ?? { _id: r.id }, images: false };
    default: {
      const { s: _s, t: _t, w: _w, op: _o, db: _d, l: _l, n: _n, ...command } = r;
      return { ...base, op: "c", ...command } as OplogEntry;
    }
  }
}
