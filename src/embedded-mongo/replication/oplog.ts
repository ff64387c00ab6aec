// The oplog: one entry per write (insert, update/replace, delete, and namespace commands), each stamped with a
// strictly increasing cluster Timestamp. Change streams read it; durable mode journals it. The in-memory copy
// is capped (oldest entries are dropped), like mongod's capped oplog collection.
import { Timestamp, type Binary, type Document, type Long } from "bson";
import { describeUpdate, type UpdateDescription } from "../query/update-description.ts";
import type { NamespaceCommand, WriteListener, WrittenCollection } from "../storage/write-listener.ts";

interface EntryBase {
  /** Position in the oplog, 1, 2, 3... (never reused, survives restarts in durable mode). */
  seq: number;
  ts: Timestamp;
  wall: Date;
  db: string;
  /** A transaction's write: its session (`{id}`) and txnNumber, which its change events carry. */
  lsid?: Document;
  txnNumber?: Long;
}

/** What a document write records about its collection besides the namespace. */
interface DocumentEntryBase extends EntryBase {
  coll: string;
  /** The collection's UUID (absent in entries journaled before UUIDs were recorded). */
  uuid?: Binary | undefined;
  /** A write to a time-series collection: mongod's change streams never show these (they go to its buckets). */
  timeseries?: boolean;
}

export interface InsertEntry extends DocumentEntryBase {
  op: "i";
  doc: Document;
  /** Whether the collection records pre- and post-images (changeStreamPreAndPostImages). */
  images: boolean;
}

export interface UpdateEntry extends DocumentEntryBase {
  op: "u";
  /** The document before (absent for an entry reloaded from the journal, which keeps only `description`). */
  pre?: Document;
  post: Document;
  /** Set when `pre` is absent: the updateDescription computed when the write was journaled. */
  description?: UpdateDescription | undefined;
  /** A replacement-style update (a "replace" event) rather than an operator or pipeline update. */
  replacement: boolean;
  images: boolean;
}

export interface DeleteEntry extends DocumentEntryBase {
  op: "d";
  /** The deleted document (only its _id for an entry reloaded from the journal). */
  pre: Document;
  images: boolean;
}

export type CommandEntry = EntryBase & { op: "c" } & NamespaceCommand;

export type OplogEntry = InsertEntry | UpdateEntry | DeleteEntry | CommandEntry;

/** The updateDescription of an update entry, from its before and after documents or as journaled. */
export function updateDescriptionOf(entry: UpdateEntry): UpdateDescription {
  return entry.description ?? describeUpdate(entry.pre ?? {}, entry.post);
}

export function compareTimestamps(a: Timestamp, b: Timestamp): number {
  const ta = a.high >>> 0;
  const tb = b.high >>> 0;
  if (ta !== tb) return ta < tb ? -1 : 1;
  const ia = a.low >>> 0;
  const ib = b.low >>> 0;
  return ia === ib ? 0 : ia < ib ? -1 : 1;
}

/** An entry before the oplog stamps it with its seq, timestamp and wall time. */
type Unstamped<E extends OplogEntry> = Omit<E, "seq" | "ts" | "wall">;
type EntryInput = OplogEntry extends infer E ? (E extends OplogEntry ? Unstamped<E> : never) : never;

export class Oplog implements WriteListener {
  private entries: OplogEntry[] = [];
  /** Index in `entries` of the oldest retained entry (the array is compacted now and then). */
  private head = 0;
  private lastT = 0;
  private lastI = 0;
  /** Seq of the newest entry (0: none yet). */
  lastSeq = 0;
  /** Entries up to this seq may be read by change streams (in durable mode: once they are on disk). */
  visibleSeq = 0;
  /** The oldest timestamp a change stream may resume from: older history is gone (trimmed or before a restart). */
  historyStart: Timestamp;
  /**
   * The oldest time a snapshot read can be rebuilt at: the server's start (entries replayed from the journal keep
   * no before-images) or the newest trimmed entry.
   */
  snapshotHistoryStart: Timestamp;
  /** Called with every new entry (the journal). */
  onAppend?: (entry: OplogEntry) => void;
  /** Called instead of onAppend with the entries of one transaction, all at once (the journal writes one record). */
  onAppendTogether?: (entries: OplogEntry[]) => void;
  /** While a transaction commits: its writes' entries, held back until they are appended together. */
  private heldBack: EntryInput[] | undefined;
  private readonly visibleListeners = new Set<() => void>();
  private notifyScheduled = false;

  constructor(
    readonly maxEntries = 100_000,
    /** Whether entries become visible as soon as they are applied (false: the journal makes them visible). */
    private readonly visibleOnAppend = true,
  ) {
    this.lastT = Math.floor(Date.now() / 1000);
    this.historyStart = new Timestamp({ t: this.lastT, i: 0 });
    this.snapshotHistoryStart = this.historyStart;
  }

  /** The newest timestamp handed out (the cluster time). */
  get lastTimestamp(): Timestamp {
    return new Timestamp({ t: this.lastT, i: this.lastI });
  }

  /** Timestamp of the newest entry change streams may see (the majority commit point of this one-member set). */
  get visibleTimestamp(): Timestamp {
    return this.bySeq(this.visibleSeq)?.ts ?? this.lastTimestamp;
  }

  /** Continues numbering after a restart from what the journal and snapshot held. */
  restore(seq: number, ts: Timestamp): void {
    this.lastSeq = Math.max(this.lastSeq, seq);
    this.visibleSeq = this.lastSeq;
    if (compareTimestamps(ts, this.lastTimestamp) > 0) {
      this.lastT = ts.high >>> 0;
      this.lastI = ts.low >>> 0;
    }
    this.historyStart = this.lastTimestamp;
    this.snapshotHistoryStart = this.lastTimestamp;
  }

  /**
   * Takes back the entries journaled since the last snapshot (start-up of a durable server), so change streams
   * resume across a restart; history before `historyStart` (the snapshot) is gone.
   */
  seed(entries: OplogEntry[], historyStart: Timestamp): void {
    const kept = entries.slice(-this.maxEntries);
    const dropped = entries.length - kept.length;
    this.entries = kept;
    this.head = 0;
    this.historyStart = dropped > 0 ? entries[dropped - 1]!.ts : historyStart;
  }

  /** Timestamps: seconds since the epoch plus an increment within the second, never going backwards. */
  private nextTimestamp(): Timestamp {
    const now = Math.floor(Date.now() / 1000);
    if (now > this.lastT) {
      this.lastT = now;
      this.lastI = 1;
    } else {
      this.lastI++;
    }
    return new Timestamp({ t: this.lastT, i: this.lastI });
  }

  append(input: EntryInput): void {
    if (this.heldBack) {
      this.heldBack.push(input);
      return;
    }
    const entry = this.push(input);
    this.onAppend?.(entry);
    if (this.visibleOnAppend) this.makeVisible(entry.seq);
  }

  /**
   * Runs `apply` (a transaction's commit) with the entries of its writes held back, then appends them one after the
   * other, each marked with the transaction, and hands them to onAppendTogether as one group. If `apply` throws,
   * nothing is appended (it has undone its writes).
   */
  appendTogether(apply: () => void, transaction: { lsid: Document; txnNumber: Long }): void {
    const held: EntryInput[] = [];
    this.heldBack = held;
    try {
      apply();
    } finally {
      this.heldBack = undefined;
    }
    const entries = held.map((input) => this.push(Object.assign(input, transaction)));
    const last = entries.at(-1);
    if (!last) return;
    if (this.onAppendTogether) this.onAppendTogether(entries);
    else for (const entry of entries) this.onAppend?.(entry);
    if (this.visibleOnAppend) this.makeVisible(last.seq);
  }

  private push(input: EntryInput): OplogEntry {
    // The entry is the input itself, stamped (every caller hands over an object of its own): a copy of each write's
    // entry cost as much as the rest of its recording.
    const entry = input as OplogEntry;
    entry.seq = ++this.lastSeq;
    entry.ts = this.nextTimestamp();
    entry.wall = new Date();
    this.entries.push(entry);
    if (this.entries.length - this.head > this.maxEntries) this.trim();
    return entry;
  }

  /** Drops the oldest retained entry (called only when more than maxEntries are retained). */
  private trim(): void {
    const dropped = this.entries[this.head]!;
    this.head++;
    // The next resumable point is right after the dropped entry.
    this.historyStart = dropped.ts;
    if (compareTimestamps(dropped.ts, this.snapshotHistoryStart) > 0) this.snapshotHistoryStart = dropped.ts;
    if (this.head > this.maxEntries / 4) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }

  makeVisible(seq: number): void {
    if (seq <= this.visibleSeq) return;
    this.visibleSeq = seq;
    // Waiters run once the commands read in this turn of the event loop have all run (commands stay atomic, and a
    // waiting change stream answers the writes of many connections in one batch instead of one getMore each).
    if (this.notifyScheduled || this.visibleListeners.size === 0) return;
    this.notifyScheduled = true;
    setImmediate(() => {
      this.notifyScheduled = false;
      for (const listener of [...this.visibleListeners]) listener();
    });
  }

  onVisible(listener: () => void): () => void {
    this.visibleListeners.add(listener);
    return () => this.visibleListeners.delete(listener);
  }

  /** The retained entry with this seq, undefined when it was trimmed or does not exist yet. */
  bySeq(seq: number): OplogEntry | undefined {
    const first = this.entries[this.head];
    if (!first) return undefined;
    return this.entries[this.head + (seq - first.seq)];
  }

  /** Seq of the oldest retained entry (lastSeq + 1 when none is retained). */
  get firstSeq(): number {
    return this.entries[this.head]?.seq ?? this.lastSeq + 1;
  }

  /** Seq of the first retained entry whose timestamp is >= ts (lastSeq + 1 when none). */
  seqAtOrAfter(ts: Timestamp): number {
    let lo = this.head;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareTimestamps(this.entries[mid]!.ts, ts) < 0) lo = mid + 1;
      else hi = mid;
    }
    return this.entries[lo]?.seq ?? this.lastSeq + 1;
  }

  // WriteListener: the write path of the Store reports here.
  inserted(coll: WrittenCollection, doc: Document): void {
    const entry: Unstamped<InsertEntry> = { op: "i", db: coll.db, coll: coll.name, uuid: coll.uuid, doc, images: recordsImages(coll) };
    this.append(markTimeseries(coll, entry));
  }

  updated(coll: WrittenCollection, pre: Document, post: Document, replacement: boolean): void {
    const entry: Unstamped<UpdateEntry> = {
      op: "u",
      db: coll.db,
      coll: coll.name,
      uuid: coll.uuid,
      pre,
      post,
      replacement,
      images: recordsImages(coll),
    };
    this.append(markTimeseries(coll, entry));
  }

  deleted(coll: WrittenCollection, pre: Document): void {
    const entry: Unstamped<DeleteEntry> = { op: "d", db: coll.db, coll: coll.name, uuid: coll.uuid, pre, images: recordsImages(coll) };
    this.append(markTimeseries(coll, entry));
  }

  command(db: string, command: NamespaceCommand): void {
    this.append({ op: "c", db, ...command } as EntryInput);
  }
}

/** A write to a time-series collection is marked so (its change streams never show it). */
function markTimeseries<E extends { timeseries?: boolean }>(coll: WrittenCollection, entry: E): E {
  if (coll.options.timeseries) entry.timeseries = true;
  return entry;
}

function recordsImages(coll: WrittenCollection): boolean {
  return (coll.options.changeStreamPreAndPostImages as Document | undefined)?.enabled === true;
}
