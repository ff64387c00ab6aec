// All databases of one server: database name -> collection name -> Collection, created implicitly on first write.
// Namespace changes (create, drop, rename, dropDatabase) are reported to the write listener like document writes.
import type { Binary, Document } from "bson";
import { Collection } from "./collection.ts";
import { commandError, ErrorCodes } from "../bson/errors.ts";
import type { WriteListener } from "./write-listener.ts";

export class Store {
  readonly databases = new Map<string, Map<string, Collection>>();
  private writeListener: WriteListener | undefined;

  /** Every later write (and every existing collection's) is reported to `listener`. */
  set listener(listener: WriteListener | undefined) {
    this.writeListener = listener;
    for (const coll of this.allCollections()) coll.listener = listener;
  }

  get listener(): WriteListener | undefined {
    return this.writeListener;
  }

  get(db: string, name: string): Collection | undefined {
    return this.databases.get(db)?.get(name);
  }

  /** The collection, created (as an insert or createIndexes into a new namespace does) when missing. */
  ensure(db: string, name: string): Collection {
    const existing = this.get(db, name);
    if (existing) return existing;
    validateCollectionName(db, name);
    return this.create(db, name, {});
  }

  /** `uuid`: the collection's UUID when it is known already (durable start-up); else a new one. */
  create(db: string, name: string, options: Document, uuid?: Binary): Collection {
    let collections = this.databases.get(db);
    if (!collections) this.databases.set(db, (collections = new Map()));
    const coll = new Collection(db, name, options, uuid);
    collections.set(name, coll);
    this.writeListener?.command(db, { cmd: "create", coll: name, options, uuid: coll.uuid });
    coll.listener = this.writeListener;
    return coll;
  }

  drop(db: string, name: string): Collection | undefined {
    const coll = this.get(db, name);
    if (coll) {
      this.databases.get(db)!.delete(name);
      coll.listener = undefined;
      this.writeListener?.command(db, { cmd: "drop", coll: name, uuid: coll.uuid });
    }
    return coll;
  }

  /**
   * Moves db.name (documents, indexes, options, UUID) to toDb.to, replacing an existing target when `dropTarget`
   * (one oplog entry, as mongod logs a rename with dropTarget). The caller has checked the namespaces.
   */
  rename(db: string, name: string, toDb: string, to: string, dropTarget: boolean): Collection {
    const coll = this.get(db, name)!;
    const target = this.get(toDb, to);
    if (target && !dropTarget) throw commandError(ErrorCodes.NamespaceExists, "Target namespace exists");
    if (target) {
      this.databases.get(toDb)!.delete(to);
      target.listener = undefined;
    }
    this.databases.get(db)!.delete(name);
    let collections = this.databases.get(toDb);
    if (!collections) this.databases.set(toDb, (collections = new Map()));
    coll.db = toDb;
    coll.name = to;
    collections.set(to, coll);
    this.writeListener?.command(db, { cmd: "rename", coll: name, toDb, to, uuid: coll.uuid, ...(target ? { dropTarget: target.uuid } : {}) });
    return coll;
  }

  dropDatabase(db: string): void {
    const collections = this.databases.get(db);
    if (!collections) return;
    // As mongod logs it: one drop per collection, then the dropDatabase itself.
    for (const name of [...collections.keys()]) this.drop(db, name);
    this.databases.delete(db);
    this.writeListener?.command(db, { cmd: "dropDatabase" });
  }

  *allCollections(): IterableIterator<Collection> {
    for (const collections of this.databases.values()) yield* collections.values();
  }
}

export function validateCollectionName(db: string, name: string): void {
  if (!name || name.includes("$") || name.includes("\0") || name.startsWith(".") || name.startsWith("system.")) {
    throw commandError(ErrorCodes.InvalidNamespace, `Invalid collection name: ${db}.${name}`);
  }
}
