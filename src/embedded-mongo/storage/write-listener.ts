// The storage layer's one outlet: after each applied write the Store and its collections tell a listener (the
// oplog). Storage knows only this interface, which keeps it below replication.
import type { Binary, Document } from "bson";

// `uuid`: the collection's UUID (absent in entries journaled before UUIDs were recorded).
export type NamespaceCommand =
  | { cmd: "create"; coll: string; options: Document; uuid?: Binary }
  | { cmd: "drop"; coll: string; uuid?: Binary }
  | { cmd: "dropDatabase" }
  | { cmd: "createIndex"; coll: string; spec: Document; uuid?: Binary }
  /** `spec`: the dropped index's spec. */
  | { cmd: "dropIndex"; coll: string; name: string; spec?: Document; uuid?: Binary }
  /**
   * The collection's options and index specs after a collMod; `change`: what the command asked (a modify
   * event's operationDescription), `before`: the collection's options before it.
   */
  | { cmd: "collMod"; coll: string; options: Document; indexes: Document[]; uuid?: Binary; change?: Document; before?: Document | undefined }
  /** renameCollection of db.coll to toDb.to; `dropTarget`: the UUID of the target collection it replaced. */
  | { cmd: "rename"; coll: string; toDb: string; to: string; uuid?: Binary; dropTarget?: Binary };

/** The collection a write went to, as the listener is told it. */
export interface WrittenCollection {
  readonly db: string;
  readonly name: string;
  readonly options: Document;
  readonly uuid?: Binary;
}

/** What the Store and its collections report after each applied write. */
export interface WriteListener {
  inserted(coll: WrittenCollection, doc: Document): void;
  updated(coll: WrittenCollection, pre: Document, post: Document, replacement: boolean): void;
  deleted(coll: WrittenCollection, pre: Document): void;
  command(db: string, command: NamespaceCommand): void;
}
