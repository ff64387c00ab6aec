// Oplog entry -> change events, for one stream's scope (a collection, a database, or the whole cluster), in the
// shape and field order mongod gives them. The `_id` (resume token) and the optional full documents are filled
// in by the cursor.
import type { Document } from "bson";
import { updateDescriptionOf, type OplogEntry } from "./oplog.ts";
import { TokenKind } from "./resume-token.ts";

export interface StreamScope {
  /** Unset: every database but admin, config and local (allChangesForCluster). */
  db?: string;
  /** Unset: every collection of `db`. */
  coll?: string;
}

export interface RawEvent {
  kind: TokenKind;
  event: Document;
}

const INTERNAL_DATABASES = new Set(["admin", "config", "local"]);

function inScope(scope: StreamScope, db: string, coll: string | undefined): boolean {
  if (scope.db === undefined) {
    if (INTERNAL_DATABASES.has(db)) return false;
  } else if (scope.db !== db) return false;
  if (coll === undefined) return scope.coll === undefined;
  if (coll.startsWith("system.")) return false;
  return scope.coll === undefined || scope.coll === coll;
}

function head(entry: OplogEntry, operationType: string): Document {
  return { _id: null, operationType, clusterTime: entry.ts, wallTime: entry.wall };
}

/** The events `entry` produces for a stream of `scope` (none, one, or an event followed by its invalidate). */
export function eventsFor(entry: OplogEntry, scope: StreamScope): RawEvent[] {
  switch (entry.op) {
    case "i":
      if (!inScope(scope, entry.db, entry.coll)) return [];
      return [
        {
          kind: TokenKind.Event,
          event: { ...head(entry, "insert"), fullDocument: entry.doc, ns: { db: entry.db, coll: entry.coll }, documentKey: { _id: entry.doc._id } },
        },
      ];
    case "u": {
      if (!inScope(scope, entry.db, entry.coll)) return [];
      const ns = { db: entry.db, coll: entry.coll };
      const documentKey = { _id: entry.post._id };
      if (entry.replacement) {
        return [{ kind: TokenKind.Event, event: { ...head(entry, "replace"), fullDocument: entry.post, ns, documentKey } }];
      }
      return [{ kind: TokenKind.Event, event: { ...head(entry, "update"), ns, documentKey, updateDescription: updateDescriptionOf(entry) } }];
    }
    case "d":
      if (!inScope(scope, entry.db, entry.coll)) return [];
      return [
        { kind: TokenKind.Event, event: { ...head(entry, "delete"), ns: { db: entry.db, coll: entry.coll }, documentKey: { _id: entry.pre._id } } },
      ];
    case "c":
      return commandEvents(entry, scope);
  }
}

function commandEvents(entry: OplogEntry & { op: "c" }, scope: StreamScope): RawEvent[] {
  const invalidate: RawEvent = { kind: TokenKind.Invalidate, event: head(entry, "invalidate") };
  if (entry.cmd === "drop") {
    if (!inScope(scope, entry.db, entry.coll)) return [];
    const drop: RawEvent = { kind: TokenKind.Event, event: { ...head(entry, "drop"), ns: { db: entry.db, coll: entry.coll } } };
    // A collection's stream ends with the collection.
    return scope.coll !== undefined ? [drop, invalidate] : [drop];
  }
  if (entry.cmd === "dropDatabase") {
    if (scope.coll !== undefined || !inScope(scope, entry.db, undefined)) return [];
    const event: RawEvent = { kind: TokenKind.Event, event: { ...head(entry, "dropDatabase"), ns: { db: entry.db } } };
    return scope.db !== undefined ? [event, invalidate] : [event];
  }
  // create and index changes appear only with showExpandedEvents, which this server does not offer.
  return [];
}
