// Oplog entry -> change events, for one stream's scope (a collection, a database, or the whole cluster), in the
// shape and field order mongod gives them. The `_id` (resume token) and the optional full documents are filled
// in by the cursor. With showExpandedEvents a stream also sees create, createIndexes, dropIndexes and modify
// events, `collectionUUID` on collection events, the rename's operationDescription and the update's
// disambiguatedPaths; without it those stay hidden, as mongod hides them.
import type { Binary, Document } from "bson";
import { updateDescriptionOf, type CommandEntry, type OplogEntry } from "./oplog.ts";
import { TokenKind } from "./resume-token.ts";
import { NO_AUTH_UID } from "./local-sessions.ts";

export interface StreamScope {
  /** Unset: every database but admin, config and local (allChangesForCluster). */
  db?: string;
  /** Unset: every collection of `db`. */
  coll?: string;
  /** showExpandedEvents: DDL events and the expanded fields. */
  expanded?: boolean;
}

export interface RawEvent {
  kind: TokenKind;
  event: Document;
  /**
   * An update event comes without its `updateDescription` (the diff of the document before and after, the costly
   * part): this adds it after the documentKey. A stream whose filter cannot see it calls this only for the events
   * the filter keeps.
   */
  describe?: () => void;
}

const INTERNAL_DATABASES = new Set(["admin", "config", "local"]);
const ID_INDEX = { v: 2, key: { _id: 1 }, name: "_id_" };

function inScope(scope: StreamScope, db: string, coll: string | undefined): boolean {
  if (scope.db === undefined) {
    if (INTERNAL_DATABASES.has(db)) return false;
  } else if (scope.db !== db) return false;
  if (coll === undefined) return scope.coll === undefined;
  if (coll.startsWith("system.")) return false;
  return scope.coll === undefined || scope.coll === coll;
}

function head(entry: OplogEntry, operationType: string, scope: StreamScope, uuid?: Binary): Document {
  const event: Document = { _id: null, operationType, clusterTime: entry.ts, wallTime: entry.wall };
  if (scope.expanded && uuid) event.collectionUUID = uuid;
  return event;
}

function event(document: Document): RawEvent {
  return { kind: TokenKind.Event, event: document };
}

/** The events `entry` produces for a stream of `scope` (none, one, or an event followed by its invalidate). */
export function eventsFor(entry: OplogEntry, scope: StreamScope): RawEvent[] {
  const events = entryEvents(entry, scope);
  // A transaction's writes: each event names the session and transaction, as mongod's do.
  if (entry.lsid) {
    for (const { event } of events) {
      event.lsid = { id: entry.lsid.id, uid: NO_AUTH_UID };
      event.txnNumber = entry.txnNumber;
    }
  }
  return events;
}

/** Sets an update event's updateDescription right after its documentKey, where mongod puts it (before lsid, txnNumber). */
function placeAfterDocumentKey(event: Document, updateDescription: Document): void {
  const keys = Object.keys(event);
  const trailing = keys.slice(keys.indexOf("documentKey") + 1).map((key) => [key, event[key]] as const);
  for (const [key] of trailing) delete event[key];
  event.updateDescription = updateDescription;
  for (const [key, value] of trailing) event[key] = value;
}

function entryEvents(entry: OplogEntry, scope: StreamScope): RawEvent[] {
  switch (entry.op) {
    case "i": {
      if (entry.timeseries || !inScope(scope, entry.db, entry.coll)) return [];
      // Fields set one by one after the head, in mongod's order (a spread of the head into a literal costs a copy
      // per event of every stream).
      const insert = head(entry, "insert", scope, entry.uuid);
      insert.fullDocument = entry.doc;
      insert.ns = { db: entry.db, coll: entry.coll };
      insert.documentKey = { _id: entry.doc._id };
      return [event(insert)];
    }
    case "u": {
      if (entry.timeseries || !inScope(scope, entry.db, entry.coll)) return [];
      const ns = { db: entry.db, coll: entry.coll };
      const documentKey = { _id: entry.post._id };
      const changed = head(entry, entry.replacement ? "replace" : "update", scope, entry.uuid);
      if (entry.replacement) changed.fullDocument = entry.post;
      changed.ns = ns;
      changed.documentKey = documentKey;
      if (entry.replacement) return [event(changed)];
      const update = event(changed);
      update.describe = () => {
        const { disambiguatedPaths, ...description } = updateDescriptionOf(entry);
        placeAfterDocumentKey(update.event, scope.expanded ? { ...description, disambiguatedPaths: disambiguatedPaths ?? {} } : description);
      };
      return [update];
    }
    case "d": {
      if (entry.timeseries || !inScope(scope, entry.db, entry.coll)) return [];
      const deleted = head(entry, "delete", scope, entry.uuid);
      deleted.ns = { db: entry.db, coll: entry.coll };
      deleted.documentKey = { _id: entry.pre._id };
      return [event(deleted)];
    }
    case "c":
      return commandEvents(entry, scope);
  }
}

function commandEvents(entry: CommandEntry, scope: StreamScope): RawEvent[] {
  const invalidate: RawEvent = {
    kind: TokenKind.Invalidate,
    event: { _id: null, operationType: "invalidate", clusterTime: entry.ts, wallTime: entry.wall },
  };
  switch (entry.cmd) {
    case "drop": {
      if (!inScope(scope, entry.db, entry.coll)) return [];
      const drop = event({ ...head(entry, "drop", scope, entry.uuid), ns: { db: entry.db, coll: entry.coll } });
      // A collection's stream ends with the collection.
      return scope.coll !== undefined ? [drop, invalidate] : [drop];
    }
    case "dropDatabase": {
      if (scope.coll !== undefined || !inScope(scope, entry.db, undefined)) return [];
      const drop = event({ ...head(entry, "dropDatabase", scope), ns: { db: entry.db } });
      return scope.db !== undefined ? [drop, invalidate] : [drop];
    }
    case "rename": {
      // Streams on the source and on the target namespace see it (mongod matches both); a collection's ends there.
      if (!inScope(scope, entry.db, entry.coll) && !inScope(scope, entry.toDb, entry.to)) return [];
      const to = { db: entry.toDb, coll: entry.to };
      const rename: Document = { ...head(entry, "rename", scope, entry.uuid), ns: { db: entry.db, coll: entry.coll }, to };
      if (scope.expanded) rename.operationDescription = { to, ...(entry.dropTarget ? { dropTarget: entry.dropTarget } : {}) };
      return scope.coll !== undefined ? [event(rename), invalidate] : [event(rename)];
    }
    default:
      return scope.expanded ? expandedEvents(entry, scope) : [];
  }
}

/** create, createIndexes, dropIndexes and modify: only for streams opened with showExpandedEvents. */
function expandedEvents(entry: CommandEntry, scope: StreamScope): RawEvent[] {
  if (entry.cmd === "dropDatabase" || entry.cmd === "drop" || entry.cmd === "rename") return [];
  if (!inScope(scope, entry.db, entry.coll)) return [];
  const ns = { db: entry.db, coll: entry.coll };
  switch (entry.cmd) {
    case "create": {
      if (typeof entry.options.viewOn === "string") {
        // A view has no UUID: mongod reports its definition.
        return [
          event({
            ...head(entry, "create", scope),
            ns,
            operationDescription: { viewOn: entry.options.viewOn, pipeline: entry.options.pipeline ?? [] },
          }),
        ];
      }
      const description: Document = { ...entry.options };
      if (!entry.options.clusteredIndex && !entry.options.timeseries) description.idIndex = ID_INDEX;
      return [event({ ...head(entry, "create", scope, entry.uuid), ns, operationDescription: description })];
    }
    case "createIndex":
      return [event({ ...head(entry, "createIndexes", scope, entry.uuid), ns, operationDescription: { indexes: [entry.spec] } })];
    case "dropIndex":
      return [
        event({ ...head(entry, "dropIndexes", scope, entry.uuid), ns, operationDescription: { indexes: [entry.spec ?? { name: entry.name }] } }),
      ];
    case "collMod": {
      const modify: Document = { ...head(entry, "modify", scope, entry.uuid), ns, operationDescription: entry.change ?? {} };
      if (entry.before) modify.stateBeforeChange = { collectionOptions: { ...(entry.uuid ? { uuid: entry.uuid } : {}), ...entry.before } };
      return [event(modify)];
    }
  }
}
