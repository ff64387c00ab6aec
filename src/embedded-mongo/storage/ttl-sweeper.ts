// Deletes documents whose TTL-indexed date is older than expireAfterSeconds, like mongod's TTLMonitor.
import { TypeBound, TypeRank } from "../query/bson-order.ts";
import type { Store } from "./store.ts";
import { entryRid } from "./collection-index.ts";
import { expiredTimeseriesRecords } from "./collection-options.ts";

/** One pass over every TTL index; returns how many documents were removed. */
export function sweepExpired(store: Store, now = Date.now()): number {
  let removed = 0;
  for (const coll of store.allCollections()) {
    // A time-series collection's expireAfterSeconds applies to its timeField.
    for (const rid of expiredTimeseriesRecords(coll, now)) if (coll.remove(rid)) removed++;
    for (const index of coll.indexes) {
      const [keyField] = index.fields;
      if (index.expireAfterSeconds === undefined || keyField === undefined) continue;
      const cutoff = new Date(now - index.expireAfterSeconds * 1000);
      // Only dates expire (an array expires on its earliest date): scan the date bracket of the index up to cutoff.
      const expired = new Set<number>();
      const ascending = keyField[1] === 1;
      const before = (entry: unknown[]) => index.compareKeys(entry, [ascending ? new TypeBound(TypeRank.Date, -1) : cutoff]) < 0;
      if (ascending) {
        index.entries.forwardFrom(index.entries.seek(before), (e) => {
          if (!(e[0] instanceof Date) || e[0].getTime() > cutoff.getTime()) return false;
          if (e[0].getTime() < cutoff.getTime()) expired.add(entryRid(e));
          return true;
        });
      } else {
        index.entries.forwardFrom(index.entries.seek(before), (e) => {
          if (!(e[0] instanceof Date)) return false;
          if (e[0].getTime() < cutoff.getTime()) expired.add(entryRid(e));
          return true;
        });
      }
      for (const rid of expired) if (coll.remove(rid)) removed++;
    }
  }
  return removed;
}
