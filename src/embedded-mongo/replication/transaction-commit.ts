// Commit: the transaction's writes applied to the live store in one synchronous step (no other command runs in
// between), and recorded in the oplog together, so the journal writes them as one record and change streams see
// them at once. Every document the transaction wrote must still be, in the live store, the version its snapshot
// saw (a write committed since by someone else is a WriteConflict); a failure half-way (a unique index another
// commit filled meanwhile) undoes what was applied and answers WriteConflict too.
import { CollectionIndex } from "../storage/collection-index.ts";
import { CommandError } from "../bson/errors.ts";
import type { Oplog } from "./oplog.ts";
import type { Store } from "../storage/store.ts";
import { type Transaction, type TransactionWrite, writeConflict } from "./transaction.ts";

export function applyTransaction(txn: Transaction, store: Store, oplog: Oplog): void {
  for (const claim of txn.claims.values()) {
    const live = store.get(claim.db, claim.coll);
    const current = live ? (live.documentById(claim.id)?.doc ?? null) : null;
    if (current !== claim.seen) throw writeConflict();
  }
  if (txn.writes.length === 0) return;
  oplog.appendTogether(
    () => {
      const undo: (() => void)[] = [];
      try {
        for (const write of txn.writes) undo.push(applyWrite(write, store));
      } catch (err) {
        for (const step of undo.reverse()) step();
        throw err instanceof CommandError ? writeConflict() : err;
      }
    },
    { lsid: txn.lsid, txnNumber: txn.txnNumberLong },
  );
}

/** Applies one write; answers how to take it back. */
function applyWrite(write: TransactionWrite, store: Store): () => void {
  if (write.op === "create") {
    if (store.get(write.db, write.coll)) throw writeConflict();
    store.create(write.db, write.coll, write.options, write.uuid);
    return () => store.drop(write.db, write.coll);
  }
  const coll = store.get(write.db, write.coll);
  if (!coll) throw writeConflict();
  switch (write.op) {
    case "createIndex": {
      const name = String(write.spec.name);
      if (coll.index(name)) throw writeConflict();
      coll.addIndex(new CollectionIndex(write.spec));
      return () => coll.dropIndex(name);
    }
    case "i": {
      const rid = coll.insert(write.doc);
      return () => coll.remove(rid);
    }
    case "u": {
      const found = coll.documentById(write.pre._id);
      if (found?.doc !== write.pre) throw writeConflict();
      coll.replace(found.rid, write.post, write.replacement);
      return () => coll.replace(found.rid, write.pre, write.replacement);
    }
    case "d": {
      const found = coll.documentById(write.pre._id);
      if (found?.doc !== write.pre) throw writeConflict();
      coll.remove(found.rid);
      return () => coll.insert(write.pre);
    }
  }
}
