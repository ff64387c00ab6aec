// A collection: documents by record id plus their indexes. Every write checks all unique indexes before it
// mutates anything, so a failed write leaves documents and indexes exactly as they were. Each applied write is
// reported to the listener (the oplog), which is how change streams and the journal see every write path.
import { UUID, type Binary, type Document } from "bson";
import { cloneDocument } from "../bson/clone.ts";
import { CollectionIndex, sameFields, sameKeys } from "./collection-index.ts";
import { checkTimeseriesDocument } from "./collection-options.ts";
import { type Collation, parseCollation } from "../query/collation.ts";
import type { WriteListener } from "./write-listener.ts";
import { RecordMap } from "./record-map.ts";

export class Collection {
  /** Record id -> document, in record id order: the collection's natural order. */
  private records = new RecordMap<Document>();
  readonly indexes: CollectionIndex[] = [];
  readonly options: Document;
  /** Told about every applied write; unset while a durable store is being loaded (replay is not a new write). */
  listener: WriteListener | undefined;
  private nextRid = 1;
  /** The default collation (`create` with `collation`, kept whole in options.collation); undefined: binary. */
  readonly collation: Collation | undefined;
  /** The collection's UUID (listCollections' info.uuid, change events' collectionUUID); kept across a rename. */
  readonly uuid: Binary;

  constructor(
    /** Changed only by a rename (Store.rename). */
    public db: string,
    public name: string,
    options: Document = {},
    uuid?: Binary,
  ) {
    this.options = options;
    this.uuid = uuid ?? new UUID();
    this.collation = options.collation === undefined ? undefined : (parseCollation(options.collation) ?? undefined);
    // The default collation also collates the _id index, as mongod's does (a view's is only its query default).
    const idSpec = idIndexSpec(options);
    if (this.collation && typeof options.viewOn !== "string") idSpec.collation = this.collation.spec;
    this.indexes.push(new CollectionIndex(idSpec));
  }

  /** A time-series collection: documents need a date in the timeField and `_id` is not unique. */
  get timeseries(): boolean {
    return isTimeseries(this.options);
  }

  /** The newest record id handed out (documents inserted later have larger ones). */
  get lastRid(): number {
    return this.nextRid - 1;
  }

  get docs(): RecordMap<Document> {
    return this.records;
  }

  /** Record ids of the documents with this `_id`: one at most, but in a time-series collection (non-unique _id). */
  ridsById(id: unknown): number[] {
    // The _id index is neither sparse nor partial: a document always has its one key.
    const [key] = this.idIndex.keysFor({ _id: id });
    return key === undefined ? [] : this.idIndex.lookup(key);
  }

  /** The stored document with this `_id`, with its record id. */
  documentById(id: unknown): { rid: number; doc: Document } | undefined {
    const [rid] = this.ridsById(id);
    const doc = rid === undefined ? undefined : this.records.get(rid);
    return rid === undefined || doc === undefined ? undefined : { rid, doc };
  }

  get ns(): string {
    return `${this.db}.${this.name}`;
  }

  get idIndex(): CollectionIndex {
    // The constructor adds it first and dropIndex keeps it.
    const index = this.indexes[0];
    if (!index) throw new Error(`${this.ns} has no _id index`);
    return index;
  }

  /**
   * A private copy (a transaction's) with this collection's name, options, UUID, documents under the same record ids
   * and indexes. Documents and index entries are shared until one side writes them, so a copy costs a few entries
   * per 512 documents, whatever the collection's size.
   */
  copy(): Collection {
    const copy = new Collection(this.db, this.name, this.options, this.uuid);
    copy.indexes.length = 0;
    copy.records = this.records.copy();
    copy.nextRid = this.nextRid;
    for (const index of this.indexes) copy.indexes.push(index.clone());
    return copy;
  }

  /**
   * Puts back earlier versions of documents (a copy turned into the collection as it was at an earlier time): each
   * `rid` (undefined: a document absent now) gets `doc` (null: absent then). Not a write: nothing is reported, and
   * no uniqueness is checked, since the versions together were a state the collection had. A document deleted since
   * comes back after the others, under a new record id.
   */
  rewind(versions: { rid: number | undefined; doc: Document | null }[]): void {
    // Every changed document leaves its index entries before any earlier version takes its keys back.
    for (const { rid } of versions) {
      const current = rid === undefined ? undefined : this.records.get(rid);
      if (rid === undefined || !current) continue;
      for (const index of this.indexes) index.remove(index.keysFor(current), rid);
    }
    for (const { rid, doc } of versions) {
      if (doc === null) {
        if (rid !== undefined) this.records.delete(rid);
        continue;
      }
      const at = rid ?? this.nextRid++;
      for (const index of this.indexes) index.add(index.keysFor(doc), at);
      this.records.set(at, doc);
    }
  }

  index(name: string): CollectionIndex | undefined {
    return this.indexes.find((i) => i.name === name);
  }

  /** Inserts a document (which must already carry its _id); throws the mongod duplicate-key error on conflict. */
  insert(doc: Document): number {
    if (this.timeseries) checkTimeseriesDocument(this.options, doc);
    const rid = this.nextRid++;
    const keys = this.indexes.map((index) => index.keysFor(doc));
    this.indexes.forEach((index, i) => {
      const indexKeys = keys[i]!; // one list per index, mapped above
      const conflict = index.findConflict(indexKeys, rid) ?? preparedUniqueConflict(index, indexKeys, rid);
      if (conflict) throw index.duplicateKeyError(this.ns, conflict);
    });
    this.indexes.forEach((index, i) => index.add(keys[i]!, rid));
    this.records.set(rid, doc);
    this.listener?.inserted(this, doc);
    return rid;
  }

  /**
   * Swaps in the new version of a document, keeping its record id (and so its natural-order position).
   * `replacement`: the write was a whole-document replacement (a "replace" change event, not an "update").
   */
  replace(rid: number, newDoc: Document, replacement = false): void {
    const oldDoc = this.records.get(rid);
    if (!oldDoc) return;
    const changes: [CollectionIndex, unknown[][], unknown[][]][] = [];
    for (const index of this.indexes) {
      if (index.dependsOn && sameFields(index.dependsOn, oldDoc, newDoc)) continue;
      const oldKeys = index.keysFor(oldDoc);
      const newKeys = index.keysFor(newDoc);
      if (sameKeys(oldKeys, newKeys)) continue;
      const conflict = index.findConflict(newKeys, rid) ?? preparedUniqueConflict(index, newKeys, rid, oldKeys);
      if (conflict) throw index.duplicateKeyError(this.ns, conflict);
      changes.push([index, oldKeys, newKeys]);
    }
    for (const [index, oldKeys, newKeys] of changes) index.replaceKeys(oldKeys, newKeys, rid);
    this.records.set(rid, newDoc);
    this.listener?.updated(this, oldDoc, newDoc, replacement);
  }

  remove(rid: number): boolean {
    const doc = this.records.get(rid);
    if (!doc) return false;
    for (const index of this.indexes) index.remove(index.keysFor(doc), rid);
    this.records.delete(rid);
    this.listener?.deleted(this, doc);
    return true;
  }

  /** Builds a new index over the existing documents; throws (adding nothing) on duplicates or parallel arrays. */
  addIndex(index: CollectionIndex): void {
    const all: [unknown[][], number][] = [];
    for (const [rid, doc] of this.records) {
      const keys = index.keysFor(doc);
      all.push([keys, rid]);
    }
    try {
      for (const [keys, rid] of all) {
        const conflict = index.findConflict(keys, rid);
        if (conflict) throw index.duplicateKeyError(this.ns, conflict);
        index.add(keys, rid);
      }
    } catch (err) {
      index.entries.clear();
      throw err;
    }
    this.indexes.push(index);
    // A copy: collMod changes the spec in place later, the entry must keep what was built.
    this.listener?.command(this.db, { cmd: "createIndex", coll: this.name, spec: cloneDocument(index.spec), uuid: this.uuid });
  }

  dropIndex(name: string): void {
    const i = this.indexes.findIndex((x) => x.name === name);
    const index = this.indexes[i];
    if (i <= 0 || !index) return;
    this.indexes.splice(i, 1);
    this.listener?.command(this.db, { cmd: "dropIndex", coll: this.name, name, spec: index.spec, uuid: this.uuid });
  }
}

/**
 * An index with `prepareUnique: true` (collMod) still holds the duplicates it had, but refuses new ones: a key of
 * the written document that another record already has (and the document did not have before) conflicts.
 */
function preparedUniqueConflict(index: CollectionIndex, keys: unknown[][], rid: number, oldKeys: unknown[][] = []): unknown[] | undefined {
  if (index.spec.prepareUnique !== true || index.unique) return undefined;
  for (const key of keys) {
    if (oldKeys.some((old) => index.compareKeys(old, key) === 0)) continue;
    if (index.lookup(key).some((other) => other !== rid)) return key;
  }
  return undefined;
}

/** Name of a time-series collection's internal _id index (not "_id_", which would make it unique). */
export const TIMESERIES_ID_INDEX = "$timeseries_id";

export function isTimeseries(options: Document): boolean {
  return options.timeseries !== undefined && options.timeseries !== null;
}

/**
 * The spec of the _id index: a clustered collection's clustered index (listIndexes shows it with `clustered:
 * true`), a time-series collection's internal, non-unique one (listIndexes does not show it: mongod's has no _id
 * index), else mongod's `_id_`.
 */
function idIndexSpec(options: Document): Document {
  if (isTimeseries(options)) return { v: 2, key: { _id: 1 }, name: TIMESERIES_ID_INDEX };
  const clustered = options.clusteredIndex as Document | undefined;
  if (clustered && typeof clustered === "object") return { v: 2, key: { _id: 1 }, name: clustered.name ?? "_id_", unique: true, clustered: true };
  return { v: 2, key: { _id: 1 }, name: "_id_" };
}
