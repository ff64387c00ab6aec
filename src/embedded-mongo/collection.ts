// A collection: documents by record id plus their indexes. Every write checks all unique indexes before it
// mutates anything, so a failed write leaves documents and indexes exactly as they were.
import type { Document } from "bson";
import { CollectionIndex, sameKeys } from "./collection-index.ts";

export class Collection {
  /** Record id -> document. Map order is insertion order, which is the collection's natural order. */
  readonly docs = new Map<number, Document>();
  readonly indexes: CollectionIndex[] = [];
  readonly options: Document;
  private nextRid = 1;

  constructor(
    readonly db: string,
    readonly name: string,
    options: Document = {},
  ) {
    this.options = options;
    this.indexes.push(new CollectionIndex({ v: 2, key: { _id: 1 }, name: "_id_" }));
  }

  get ns(): string {
    return `${this.db}.${this.name}`;
  }

  get idIndex(): CollectionIndex {
    return this.indexes[0];
  }

  index(name: string): CollectionIndex | undefined {
    return this.indexes.find((i) => i.name === name);
  }

  /** Inserts a document (which must already carry its _id); throws the mongod duplicate-key error on conflict. */
  insert(doc: Document): number {
    const rid = this.nextRid++;
    const keys = this.indexes.map((index) => index.keysFor(doc));
    this.indexes.forEach((index, i) => {
      const conflict = index.findConflict(keys[i], rid);
      if (conflict) throw index.duplicateKeyError(this.ns, conflict);
    });
    this.indexes.forEach((index, i) => index.add(keys[i], rid));
    this.docs.set(rid, doc);
    return rid;
  }

  /** Swaps in the new version of a document, keeping its record id (and so its natural-order position). */
  replace(rid: number, newDoc: Document): void {
    const oldDoc = this.docs.get(rid);
    if (!oldDoc) return;
    const changes: [CollectionIndex, unknown[][], unknown[][]][] = [];
    for (const index of this.indexes) {
      const oldKeys = index.keysFor(oldDoc);
      const newKeys = index.keysFor(newDoc);
      if (sameKeys(oldKeys, newKeys)) continue;
      const conflict = index.findConflict(newKeys, rid);
      if (conflict) throw index.duplicateKeyError(this.ns, conflict);
      changes.push([index, oldKeys, newKeys]);
    }
    for (const [index, oldKeys, newKeys] of changes) {
      index.remove(oldKeys, rid);
      index.add(newKeys, rid);
    }
    this.docs.set(rid, newDoc);
  }

  remove(rid: number): boolean {
    const doc = this.docs.get(rid);
    if (!doc) return false;
    for (const index of this.indexes) index.remove(index.keysFor(doc), rid);
    this.docs.delete(rid);
    return true;
  }

  /** Builds a new index over the existing documents; throws (adding nothing) on duplicates or parallel arrays. */
  addIndex(index: CollectionIndex): void {
    const all: [unknown[][], number][] = [];
    for (const [rid, doc] of this.docs) {
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
  }

  dropIndex(name: string): void {
    const i = this.indexes.findIndex((x) => x.name === name);
    if (i > 0) this.indexes.splice(i, 1);
  }
}
