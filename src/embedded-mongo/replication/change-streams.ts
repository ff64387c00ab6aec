// Change stream cursors: an aggregate whose first stage is $changeStream opens one; getMore reads the oplog from
// the cursor's position, waiting up to maxTimeMS (1 s by default) for new events without blocking anything else,
// and answers an empty batch with a postBatchResumeToken when none came. Later pipeline stages ($match,
// $project, ...) run on each event.
import { calculateObjectSize, Long, Timestamp, type Document } from "bson";
import { eventsFor, type RawEvent, type StreamScope } from "./change-events.ts";
import { CommandError, commandError, ErrorCodes } from "../bson/errors.ts";
import { compileFilter, createQuery, runAggregation } from "../query/matcher.ts";
import { compareTimestamps, type OplogEntry } from "./oplog.ts";
import { decodeToken, encodeToken, TokenKind, type StreamPosition } from "./resume-token.ts";
import { cloneDocument } from "../bson/clone.ts";
import { cursorsToKill, getMoreTarget, isCursorId } from "../bson/cursor-ids.ts";
import { isPlainObject } from "../query/bson-order.ts";
import type { Oplog } from "./oplog.ts";
import type { Store } from "../storage/store.ts";

/** What change streams need of the server (its ServerState has it): its data, its oplog, its cursors. */
interface StreamServer {
  store: Store;
  oplog: Oplog;
  replSet?: unknown;
  changeStreams: ChangeStreamCursors;
}

/** What they need of a command's context. */
interface StreamContext {
  db: string;
  server: StreamServer;
  signal?: AbortSignal;
}

const FULL_DOCUMENT_MODES = ["default", "updateLookup", "whenAvailable", "required"] as const;
const PRE_IMAGE_MODES = ["off", "whenAvailable", "required"] as const;
type FullDocumentMode = (typeof FULL_DOCUMENT_MODES)[number];
type PreImageMode = (typeof PRE_IMAGE_MODES)[number];

// mongod's aggregation stage names: an unknown one is a parse error (40324) before any change stream check.
const STAGE_NAMES = new Set([
  "$addFields",
  "$bucket",
  "$bucketAuto",
  "$changeStream",
  "$collStats",
  "$count",
  "$currentOp",
  "$densify",
  "$documents",
  "$facet",
  "$fill",
  "$geoNear",
  "$graphLookup",
  "$group",
  "$indexStats",
  "$limit",
  "$listLocalSessions",
  "$listSearchIndexes",
  "$listSessions",
  "$lookup",
  "$match",
  "$merge",
  "$out",
  "$planCacheStats",
  "$project",
  "$redact",
  "$replaceRoot",
  "$replaceWith",
  "$sample",
  "$search",
  "$searchMeta",
  "$set",
  "$setWindowFields",
  "$skip",
  "$sort",
  "$sortByCount",
  "$unionWith",
  "$unset",
  "$unwind",
]);
// Stages allowed after $changeStream (mongod's isAllowedInChangeStream).
const ALLOWED_STAGES = new Set(["$match", "$project", "$addFields", "$set", "$unset", "$replaceRoot", "$replaceWith", "$redact"]);
const KNOWN_OPTIONS = new Set([
  "resumeAfter",
  "startAfter",
  "startAtOperationTime",
  "fullDocument",
  "fullDocumentBeforeChange",
  "allChangesForCluster",
  "showMigrationEvents",
  "showExpandedEvents",
]);
const DEFAULT_BATCH = 101;
const MAX_BATCH_BYTES = 16 * 1024 * 1024 - 16 * 1024;
const DEFAULT_AWAIT_MS = 1000;

// Errors after which resuming cannot help: mongod labels them so drivers do not try.
const NON_RESUMABLE = new Set([280, 286]);

function namedError(code: number, codeName: string, message: string): CommandError {
  return commandError(code, message, NON_RESUMABLE.has(code) ? { codeName, errorLabels: ["NonResumableChangeStreamError"] } : { codeName });
}

interface Batch {
  docs: Document[];
  /** The stream ended (invalidate returned): the cursor is closed. */
  closed: boolean;
}

/** A `$match` stage's test of an event: a filter of plain comparisons (the usual one) is tested without a mingo query. */
function matchTest(match: unknown): (event: Document) => boolean {
  if (isPlainObject(match)) return compileFilter(match) ?? (() => true);
  const query = createQuery(match as Document);
  return (event) => query.test(event);
}

class ChangeStreamCursor {
  lastUsed = Date.now();
  /** Wakes a getMore that is waiting for events (set only while one waits). */
  wake?: ((reason: "events" | "killed") => void) | undefined;
  /**
   * Compiled filters when the user's stages are all $match (the common case), each with whether it may read an
   * update's `updateDescription`: the description is built before the first stage that may read it, or for a kept
   * event, so a stage that drops an event first (`operationType: "insert"`) saves building it. Else the stages run
   * per event.
   */
  private readonly matchOnly: { test: (event: Document) => boolean; readsDescription: boolean }[] | undefined;

  constructor(
    readonly id: Long,
    readonly ns: string,
    private readonly scope: StreamScope,
    public position: StreamPosition,
    private readonly fullDocument: FullDocumentMode,
    private readonly fullDocumentBeforeChange: PreImageMode,
    private readonly stages: Document[],
  ) {
    this.matchOnly = stages.every((s) => "$match" in s)
      ? stages.map((s) => ({ test: matchTest(s.$match), readsDescription: mayRead(s.$match as Document, "updateDescription") }))
      : undefined;
  }

  get token(): Document {
    return encodeToken(this.position.ts, this.position.kind);
  }

  /** Events after the cursor's position, up to what is visible (durable) in the oplog. */
  collect(state: StreamServer, limit: number): Batch {
    const oplog = state.oplog;
    const docs: Document[] = [];
    let bytes = 0;
    let seq = this.position.kind === TokenKind.HighWaterMark ? this.position.seq + 1 : this.position.seq;
    for (; seq <= oplog.visibleSeq; seq++) {
      const entry = oplog.bySeq(seq);
      if (!entry) throw historyLost();
      for (const raw of eventsFor(entry, this.scope)) {
        if (seq === this.position.seq && raw.kind <= this.position.kind) continue;
        const previous = this.position;
        this.position = { seq, kind: raw.kind, ts: entry.ts };
        const out = this.finish(state, entry, raw);
        if (raw.kind === TokenKind.Invalidate) {
          if (out) docs.push(out);
          return { docs, closed: true };
        }
        if (!out) continue;
        const size = calculateObjectSize(out);
        if (docs.length > 0 && bytes + size > MAX_BATCH_BYTES) {
          // Not sent: the next batch starts with this event.
          this.position = previous;
          return { docs, closed: false };
        }
        bytes += size;
        docs.push(out);
        if (docs.length >= limit) return { docs, closed: false };
      }
      this.position = { seq, kind: TokenKind.HighWaterMark, ts: entry.ts };
    }
    return { docs, closed: false };
  }

  /** Adds the resume token and requested images, then runs the user's stages; undefined when filtered out. */
  private finish(state: StreamServer, entry: OplogEntry, raw: RawEvent): Document | undefined {
    const { event } = raw;
    const token = this.token;
    event._id = token;
    this.addImages(state, entry, event);
    let out: Document | undefined;
    if (this.matchOnly) {
      let described = false;
      const kept = this.matchOnly.every(({ test, readsDescription }) => {
        if (readsDescription && !described) {
          raw.describe?.();
          described = true;
        }
        return test(event);
      });
      if (!kept) return undefined;
      if (!described) raw.describe?.();
      out = event;
    } else {
      raw.describe?.();
      out = runAggregation([cloneDocument(event)], this.stages, () => [])[0];
    }
    if (!out) return undefined;
    const id = out._id as Document | undefined;
    if (!id || typeof id !== "object" || id._data !== token._data || Object.keys(id).length !== 1) {
      throw namedError(
        280,
        "ChangeStreamFatalError",
        `Encountered an event whose _id field, which contains the resume token, was modified by the pipeline. Modifying the _id field of an event makes it impossible to resume the stream from that point. Only transformations that retain the unmodified _id field are allowed. Expected: { _id: { _data: "${token._data}" } } but found: { _id: ${JSON.stringify(id ?? null)} }`,
      );
    }
    return out;
  }

  private addImages(state: StreamServer, entry: OplogEntry, event: Document): void {
    const type = event.operationType;
    if (type === "update" && entry.op === "u" && this.fullDocument !== "default") {
      let post: Document | null;
      if (this.fullDocument === "updateLookup") {
        const coll = state.store.get(entry.db, entry.coll);
        post = coll?.documentById(entry.post._id)?.doc ?? null;
      } else {
        post = entry.images ? entry.post : null;
        if (!post && this.fullDocument === "required") {
          throw namedError(
            47,
            "NoMatchingDocument",
            `Change stream was configured to require a post-image for all update events, but the post-image was not found for event: ${describeEvent(entry)}`,
          );
        }
      }
      insertAfter(event, "wallTime", "fullDocument", post);
    }
    if ((type === "update" || type === "replace" || type === "delete") && this.fullDocumentBeforeChange !== "off") {
      const pre = entry.op === "u" || entry.op === "d" ? (entry.images ? (entry.pre ?? null) : null) : null;
      if (!pre && this.fullDocumentBeforeChange === "required") {
        throw namedError(
          47,
          "NoMatchingDocument",
          `Change stream was configured to require a pre-image for all update, delete and replace events, but the pre-image was not found for event: ${describeEvent(entry)}`,
        );
      }
      insertAfter(event, "fullDocument" in event ? "fullDocument" : "wallTime", "fullDocumentBeforeChange", pre);
    }
  }
}

/**
 * Whether a $match filter may read `field` of the event: it names the field (or a path inside it), or uses an
 * operator that can read anything ($expr, $where, $jsonSchema...). Non-$match stages are taken to read everything.
 */
function mayRead(filter: Document | undefined, field: string): boolean {
  if (filter === undefined || filter === null || typeof filter !== "object") return true;
  for (const [key, value] of Object.entries(filter)) {
    if (key === "$and" || key === "$or" || key === "$nor") {
      if (!Array.isArray(value) || value.some((clause) => mayRead(clause as Document, field))) return true;
    } else if (key === "$comment") {
    } else if (key.startsWith("$") || key === field || key.startsWith(`${field}.`)) {
      return true;
    }
  }
  return false;
}

/** Sets `event[field] = value` right after `after`, keeping mongod's field order. */
function insertAfter(event: Document, after: string, field: string, value: unknown): void {
  const entries = Object.entries(event).filter(([k]) => k !== field);
  const at = entries.findIndex(([k]) => k === after) + 1;
  entries.splice(at, 0, [field, value]);
  for (const k of Object.keys(event)) delete event[k];
  Object.assign(event, Object.fromEntries(entries));
}

function describeEvent(entry: OplogEntry): string {
  const id = entry.op === "u" ? entry.post._id : entry.op === "d" ? entry.pre._id : undefined;
  return `{ ns: "${entry.db}.${"coll" in entry ? entry.coll : ""}", documentKey: { _id: ${JSON.stringify(id)} }, clusterTime: Timestamp(${entry.ts.high >>> 0}, ${entry.ts.low >>> 0}) }`;
}

function historyLost(): CommandError {
  return namedError(286, "ChangeStreamHistoryLost", "Resume of change stream was not possible, as the resume point may no longer be in the oplog.");
}

export class ChangeStreamCursors {
  private readonly open = new Map<string, ChangeStreamCursor>();

  constructor(private readonly idleTimeoutMs: number) {}

  get size(): number {
    return this.open.size;
  }

  /** Whether `id` is one of these cursors' (an id of another type is no cursor's: the usual handler refuses it). */
  owns(id: unknown): boolean {
    return isCursorId(id) && this.open.has(id.toString());
  }

  /** aggregate with a leading $changeStream stage (replica set only). */
  openStream(cmd: Document, ctx: StreamContext): Document {
    const state = ctx.server;
    const pipeline = cmd.pipeline as Document[];
    const spec = pipeline[0]?.$changeStream;
    if (!spec || typeof spec !== "object" || Array.isArray(spec)) {
      throw commandError(ErrorCodes.TypeMismatch, "the $changeStream stage must be specified as an object");
    }
    for (const key of Object.keys(spec)) {
      if (KNOWN_OPTIONS.has(key)) continue;
      // As a server from before these options (or without them) answers.
      throw commandError(40415, `BSON field '$changeStream.${key}' is an unknown field.`, { codeName: "Location40415" });
    }
    for (const key of ["allChangesForCluster", "showMigrationEvents", "showExpandedEvents"]) {
      if (spec[key] !== undefined && typeof spec[key] !== "boolean")
        throw commandError(
          ErrorCodes.TypeMismatch,
          `BSON field '$changeStream.${key}' is the wrong type '${typeof spec[key]}', expected type 'bool'`,
        );
    }
    const stages = pipeline.slice(1);
    for (const stage of stages) {
      const [name] = Object.keys(stage);
      if (name === undefined) throw commandError(40323, "A pipeline stage specification object must contain exactly one field.");
      if (!STAGE_NAMES.has(name)) throw commandError(ErrorCodes.Location40324, `Unrecognized pipeline stage name: '${name}'`);
      if (name === "$changeStream")
        throw commandError(40602, "$changeStream is only valid as the first stage in a pipeline", { codeName: "Location40602" });
      if (!ALLOWED_STAGES.has(name)) throw commandError(ErrorCodes.IllegalOperation, `${name} is not permitted in a $changeStream pipeline`);
    }
    const scope = streamScope(cmd, ctx, spec.allChangesForCluster === true);
    if (spec.showExpandedEvents === true) scope.expanded = true;
    const fullDocument = enumOption(spec, "fullDocument", FULL_DOCUMENT_MODES, "default");
    const fullDocumentBeforeChange = enumOption(spec, "fullDocumentBeforeChange", PRE_IMAGE_MODES, "off");
    const position = startPosition(spec, state);
    const ns = scope.coll !== undefined ? `${ctx.db}.${scope.coll}` : `${ctx.db}.$cmd.aggregate`;
    const cursorOption = cmd.cursor as Document | undefined;
    const batchSize = cursorOption && cursorOption.batchSize !== undefined ? Number(cursorOption.batchSize) : DEFAULT_BATCH;
    if (!Number.isFinite(batchSize) || batchSize < 0)
      throw commandError(ErrorCodes.BadValue, `BatchSize value must be non-negative, but received: ${batchSize}`);
    const cursor = new ChangeStreamCursor(this.newId(), ns, scope, position, fullDocument, fullDocumentBeforeChange, stages);
    const batch = cursor.collect(state, batchSize);
    if (!batch.closed) this.open.set(cursor.id.toString(), cursor);
    return reply(cursor, batch, "firstBatch");
  }

  /** getMore on a change stream cursor: answers at once when events are there, else waits for them. */
  getMore(cmd: Document, ctx: StreamContext): Document | Promise<Document> {
    const { id, collection } = getMoreTarget(cmd);
    const key = id.toString();
    const cursor = this.open.get(key)!;
    const ns = `${ctx.db}.${collection}`;
    if (cursor.ns !== ns) {
      throw commandError(ErrorCodes.Unauthorized, `Requested getMore on namespace '${ns}', but cursor belongs to a different namespace ${cursor.ns}`);
    }
    if (cursor.wake) throw namedError(ErrorCodes.CursorNotFound, "CursorInUse", `cursor id ${key} is already in use`);
    const limit = cmd.batchSize !== undefined && Number(cmd.batchSize) > 0 ? Number(cmd.batchSize) : Infinity;
    const maxTimeMS = cmd.maxTimeMS !== undefined ? Number(cmd.maxTimeMS) : DEFAULT_AWAIT_MS;
    const state = ctx.server;
    cursor.lastUsed = Date.now();
    const first = this.collectOrClose(cursor, state, limit);
    if (first.docs.length > 0 || first.closed || maxTimeMS <= 0) return reply(cursor, first, "nextBatch");
    return new Promise<Document>((resolve) => {
      const done = (answer: () => Document) => {
        clearTimeout(timer);
        unsubscribe();
        ctx.signal?.removeEventListener("abort", onAbort);
        cursor.wake = undefined;
        cursor.lastUsed = Date.now();
        let out: Document;
        try {
          out = answer();
        } catch (err) {
          out = err instanceof CommandError ? err.toReply() : { ok: 0, errmsg: String(err), code: 1, codeName: "InternalError" };
        }
        resolve(out);
      };
      const timer = setTimeout(() => done(() => reply(cursor, this.collectOrClose(cursor, state, limit), "nextBatch")), maxTimeMS);
      const unsubscribe = state.oplog.onVisible(() => cursor.wake?.("events"));
      const onAbort = () =>
        done(() => ({ ok: 0, errmsg: "operation was interrupted because a client disconnected", code: 279, codeName: "ClientDisconnect" }));
      ctx.signal?.addEventListener("abort", onAbort);
      cursor.wake = (reason) => {
        if (reason === "killed") {
          done(() => ({ ok: 0, errmsg: `cursor id ${key} was killed while getMore awaited events`, code: 237, codeName: "CursorKilled" }));
          return;
        }
        let batch: Batch;
        try {
          batch = this.collectOrClose(cursor, state, limit);
        } catch (err) {
          done(() => {
            throw err;
          });
          return;
        }
        if (batch.docs.length > 0 || batch.closed) done(() => reply(cursor, batch, "nextBatch"));
      };
    });
  }

  /** killCursors for the ids of change stream cursors. */
  kill(ids: Long[]): Long[] {
    const killed: Long[] = [];
    for (const id of ids) {
      const key = id.toString();
      const cursor = this.open.get(key);
      if (!cursor) continue;
      this.open.delete(key);
      cursor.wake?.("killed");
      killed.push(cursor.id);
    }
    return killed;
  }

  reap(now = Date.now()): void {
    for (const [key, cursor] of this.open) {
      if (!cursor.wake && now - cursor.lastUsed > this.idleTimeoutMs) this.open.delete(key);
    }
  }

  clear(): void {
    for (const cursor of this.open.values()) cursor.wake?.("killed");
    this.open.clear();
  }

  private collectOrClose(cursor: ChangeStreamCursor, state: StreamServer, limit: number): Batch {
    try {
      const batch = cursor.collect(state, limit);
      if (batch.closed) this.open.delete(cursor.id.toString());
      return batch;
    } catch (err) {
      // An error ends the stream, as mongod kills the cursor.
      this.open.delete(cursor.id.toString());
      throw err;
    }
  }

  private newId(): Long {
    let id: Long;
    do {
      id = Long.fromBits((Math.random() * 0x100000000) | 0, (Math.random() * 0x7fffffff) | 0);
    } while (id.isZero() || this.open.has(id.toString()));
    return id;
  }
}

function reply(cursor: ChangeStreamCursor, batch: Batch, field: "firstBatch" | "nextBatch"): Document {
  return {
    cursor: { [field]: batch.docs, postBatchResumeToken: cursor.token, id: batch.closed ? Long.ZERO : cursor.id, ns: cursor.ns },
    ok: 1,
  };
}

function enumOption<T extends string>(spec: Document, field: string, values: readonly T[], fallback: T): T {
  const v = spec[field];
  if (v === undefined) return fallback;
  if (typeof v !== "string" || !values.includes(v as T)) {
    throw commandError(ErrorCodes.BadValue, `Enumeration value '${String(v)}' for field '$changeStream.${field}' is not a valid value.`);
  }
  return v as T;
}

function streamScope(cmd: Document, ctx: StreamContext, allChangesForCluster: boolean): StreamScope {
  const target = cmd.aggregate;
  if (allChangesForCluster) {
    if (ctx.db !== "admin" || target !== 1) {
      throw commandError(
        ErrorCodes.InvalidOptions,
        "A $changeStream with 'allChangesForCluster:true' may only be opened on the 'admin' database, and with no collection name",
      );
    }
    return {};
  }
  if (ctx.db === "admin" || ctx.db === "config" || ctx.db === "local") {
    throw commandError(ErrorCodes.InvalidNamespace, `$changeStream may not be opened on the internal ${ctx.db} database`);
  }
  if (target === 1) return { db: ctx.db };
  const coll = String(target);
  if (coll.startsWith("system."))
    throw commandError(ErrorCodes.InvalidNamespace, `$changeStream may not be opened on the internal ${ctx.db}.${coll} collection`);
  if (ctx.server.store.get(ctx.db, coll)?.timeseries)
    throw commandError(ErrorCodes.CommandNotSupportedOnView, `$changeStream is not supported on the time-series collection ${ctx.db}.${coll}`);
  return { db: ctx.db, coll };
}

/** Where the stream starts: after a resume token, at an operation time, or after everything written so far. */
function startPosition(spec: Document, state: StreamServer): StreamPosition {
  const oplog = state.oplog;
  const given = ["resumeAfter", "startAfter", "startAtOperationTime"].filter((k) => spec[k] !== undefined);
  if (given.length > 1)
    throw commandError(40674, "Only one type of resume option is allowed, but multiple were found.", { codeName: "Location40674" });
  const before = (seq: number): StreamPosition => ({
    seq: seq - 1,
    kind: TokenKind.HighWaterMark,
    ts: oplog.bySeq(seq - 1)?.ts ?? oplog.historyStart,
  });
  const [field] = given;
  if (field === undefined) return { seq: oplog.lastSeq, kind: TokenKind.HighWaterMark, ts: oplog.lastTimestamp };
  if (spec.startAtOperationTime !== undefined) {
    const ts = spec.startAtOperationTime;
    if (!(ts instanceof Timestamp))
      throw commandError(ErrorCodes.TypeMismatch, "BSON field '$changeStream.startAtOperationTime' is the wrong type, expected type 'timestamp'");
    if (compareTimestamps(ts, oplog.historyStart) < 0) throw historyLost();
    return before(oplog.seqAtOrAfter(ts));
  }
  const { ts, kind } = decodeToken(spec[field], `$changeStream.${field}`);
  if (field === "resumeAfter" && kind === TokenKind.Invalidate) {
    throw namedError(
      260,
      "InvalidResumeToken",
      "Attempting to resume a change stream using 'resumeAfter' is not allowed from an invalidate notification.",
    );
  }
  const fromStart = compareTimestamps(ts, oplog.historyStart);
  if (fromStart < 0) throw historyLost();
  const seq = oplog.seqAtOrAfter(ts);
  const entry = oplog.bySeq(seq);
  if (entry && compareTimestamps(entry.ts, ts) === 0) return { seq, kind, ts };
  // A high-water mark between entries, the newest entry before a restart or the last trimmed one (no longer
  // held, but resuming right after it is exact), or a time not reached yet: continue from there.
  if (kind === TokenKind.HighWaterMark || fromStart === 0 || seq > oplog.lastSeq) return before(seq);
  throw namedError(
    280,
    "ChangeStreamFatalError",
    `cannot resume stream; the resume token was not found. { _data: "${(spec[field] as Document)._data}" }`,
  );
}

/**
 * Wraps the handlers of aggregate, getMore and killCursors so that change streams go to their own cursors on a
 * replica set; everything else (and a standalone's $changeStream, answered 40573) stays with the usual handlers.
 */
export function withChangeStreams<C extends StreamContext, H extends (cmd: Document, ctx: C) => Document>(commands: Map<string, H>): Map<string, H> {
  const aggregate = commands.get("aggregate");
  const getMore = commands.get("getMore");
  const killCursors = commands.get("killCursors");
  if (aggregate) {
    commands.set("aggregate", ((cmd, ctx) => {
      const first = Array.isArray(cmd.pipeline) ? (cmd.pipeline[0] as Document | undefined) : undefined;
      if (ctx.server.replSet && first && "$changeStream" in first) return ctx.server.changeStreams.openStream(cmd, ctx);
      return aggregate(cmd, ctx);
    }) as H);
  }
  if (getMore) {
    commands.set("getMore", ((cmd, ctx) => {
      if (ctx.server.changeStreams.owns(cmd.getMore)) return ctx.server.changeStreams.getMore(cmd, ctx) as Document;
      return getMore(cmd, ctx);
    }) as H);
  }
  if (killCursors) {
    commands.set("killCursors", ((cmd, ctx) => {
      // Every id is checked before any cursor is killed, as mongod parses the whole command first.
      const ids = cursorsToKill(cmd);
      const streams = ctx.server.changeStreams;
      const mine = ids.filter((id) => streams.owns(id));
      if (mine.length === 0) return killCursors(cmd, ctx);
      const killed = streams.kill(mine);
      const others = ids.filter((id) => !mine.includes(id));
      const rest = killCursors({ ...cmd, cursors: others }, ctx);
      if (rest.ok !== 1) return rest;
      return { ...rest, cursorsKilled: [...killed, ...(rest.cursorsKilled as Long[])] };
    }) as H);
  }
  return commands;
}
