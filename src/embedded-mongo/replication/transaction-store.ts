// The store a transaction's statements run against: each collection is the transaction's private copy, taken as
// the collection was at the transaction's read time (its snapshot) the first time a statement touches it. The
// statements' writes change only these copies and are reported to the transaction (its write set); nobody else
// sees them until the commit applies them to the live store. Namespace changes other than create and createIndexes
// reach the transaction as writes too, which refuses them (transaction.ts).
import type { Binary, Document, Timestamp } from "bson";
import type { Collection } from "../storage/collection.ts";
import type { WriteListener } from "../storage/write-listener.ts";
import type { Oplog } from "./oplog.ts";
import { collectionAt } from "./snapshot-history.ts";
import { Store } from "../storage/store.ts";

export class TransactionStore extends Store {
  /** Namespaces already looked up (a missing collection is remembered as missing). */
  private readonly looked = new Set<string>();
  /**
   * Set for each statement. A statement that only reads sees a collection the transaction has not written as of
   * the read time without a private copy: the live collection itself when nobody wrote it since.
   */
  readOnly = false;

  constructor(
    private readonly live: Store,
    private readonly oplog: Oplog,
    private readonly readTs: Timestamp,
    writes: WriteListener,
  ) {
    super();
    this.listener = writes;
  }

  override get(db: string, name: string): Collection | undefined {
    const key = `${db}.${name}`;
    if (!this.looked.has(key) && this.readOnly) return collectionAt(this.live, this.oplog, this.readTs, db, name);
    if (!this.looked.has(key)) {
      this.looked.add(key);
      const live = this.live.get(db, name);
      if (live) this.adopt(db, name, this.copyAtReadTime(live, db, name));
    }
    return super.get(db, name);
  }

  override create(db: string, name: string, options: Document, uuid?: Binary): Collection {
    this.looked.add(`${db}.${name}`);
    return super.create(db, name, options, uuid);
  }

  /** The transaction's own copy of the collection as of the read time. */
  private copyAtReadTime(live: Collection, db: string, name: string): Collection {
    const atReadTime = collectionAt(this.live, this.oplog, this.readTs, db, name) ?? live;
    return atReadTime === live ? live.copy() : atReadTime;
  }

  private adopt(db: string, name: string, coll: Collection): void {
    let collections = this.databases.get(db);
    if (!collections) this.databases.set(db, (collections = new Map()));
    collections.set(name, coll);
    coll.listener = this.listener;
  }
}
