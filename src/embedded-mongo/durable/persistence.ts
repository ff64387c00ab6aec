// Durable mode (dbPath): start-up loads the snapshot and replays the journal after it; from then on every oplog
// entry (and every retryable-write outcome) is journaled, and replies to writes wait for the journal flush.
// When the journal file grows past a threshold it is rotated and a snapshot is written; once the snapshot is
// in place the older journal files are deleted.
//
// Files in dbPath: mongod.lock (its owner, see dbpath-lock.ts), snapshot.bson, journal.NNNNNN (replayed in order).
import { existsSync, ftruncateSync, fsyncSync, closeSync, mkdirSync, openSync, readdirSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { DbPathLock } from "./dbpath-lock.ts";
import { decode, decodeSession, encodeEntry, encodeSession, encodeTransaction, RecordType, StoreLoader } from "./durable-records.ts";
import { Journal, syncDirectory } from "./journal.ts";
import type { Oplog } from "../replication/oplog.ts";
import { readRecords } from "./record-file.ts";
import type { Sessions } from "../replication/sessions.ts";
import { SNAPSHOT_FILE, writeSnapshot } from "./snapshot.ts";
import { Store } from "../storage/store.ts";
import type { Collection } from "../storage/collection.ts";
import { Timestamp, type Binary, type Document } from "bson";

export interface DurableOptions {
  dbPath: string;
  snapshotAfterJournalBytes?: number;
}

const JOURNAL_PATTERN = /^journal\.(\d{6})$/;

function journalName(n: number): string {
  return `journal.${String(n).padStart(6, "0")}`;
}

function journalNumbers(dir: string): number[] {
  return readdirSync(dir)
    .map((f) => JOURNAL_PATTERN.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
}

export class DurableStorage {
  private snapshotRunning: Promise<void> | undefined;
  private snapshotScheduled = false;
  private closed = false;
  private nextJournal: number;

  private constructor(
    private readonly dir: string,
    private readonly lock: DbPathLock,
    private readonly journal: Journal,
    currentJournal: number,
    private readonly store: Store,
    private readonly oplog: Oplog,
    private readonly sessions: Sessions,
    private readonly snapshotAfterBytes: number,
  ) {
    this.nextJournal = currentJournal + 1;
  }

  static async open(options: DurableOptions, oplog: Oplog, sessions: Sessions): Promise<{ store: Store; storage: DurableStorage }> {
    const dir = path.resolve(options.dbPath);
    mkdirSync(dir, { recursive: true });
    const lock = await DbPathLock.acquire(dir);
    try {
      const loader = new StoreLoader(new Store(), oplog.maxEntries);
      loadSnapshot(dir, loader, sessions);
      const numbers = journalNumbers(dir);
      let currentBytes = 0;
      const files = numbers.map((n) => path.join(dir, journalName(n)));
      files.forEach((file, i) => {
        const { records, validBytes, totalBytes } = readRecords(file);
        const last = i === files.length - 1;
        if (validBytes < totalBytes) {
          // Only the file written last can end in a torn record (a crash during its last flush; never
          // acknowledged), so it is cut off. That is the newest file, or one just retired by a rotation whose
          // successor got nothing yet. Damage anywhere else is corruption: refuse to start.
          const laterWritten = files.slice(i + 1).some((f) => statSync(f).size > 0);
          if (laterWritten) throw new Error(`journal file ${file} is damaged at byte ${validBytes} (not its end)`);
          truncate(file, validBytes);
        }
        for (const r of records) {
          if (r.type === RecordType.Oplog) loader.apply(r.payload);
          else if (r.type === RecordType.Transaction) loader.applyTransaction(r.payload);
          else if (r.type === RecordType.Session) sessions.restore(decodeSession(r.payload));
        }
        if (last) currentBytes = validBytes;
      });
      const store = loader.finish();
      if (loader.lastTs) oplog.restore(loader.lastSeq, loader.lastTs);
      // Change streams resume across the restart from anything journaled since the snapshot (that the oplog holds).
      const { entries, droppedBefore } = loader.replayedEntries();
      oplog.seed(entries, droppedBefore ?? loader.snapshotTs ?? new Timestamp({ t: 0, i: 0 }));
      const current = numbers.at(-1) ?? 1;
      const journal = new Journal(dir, path.join(dir, journalName(current)), currentBytes);
      const storage = new DurableStorage(dir, lock, journal, current, store, oplog, sessions, options.snapshotAfterJournalBytes ?? 64 * 1024 * 1024);
      storage.attach();
      return { store, storage };
    } catch (err) {
      lock.release();
      throw err;
    }
  }

  private attach(): void {
    this.oplog.onAppend = (entry) => {
      this.journal.append(RecordType.Oplog, encodeEntry(entry), entry.seq);
      this.snapshotWhenDue();
    };
    // A transaction's writes in one record: a crash in the middle of writing it leaves a torn record, cut off at
    // start-up, never half a transaction.
    this.oplog.onAppendTogether = (entries) => {
      this.journal.append(RecordType.Transaction, encodeTransaction(entries), entries.at(-1)?.seq ?? 0);
      this.snapshotWhenDue();
    };
    this.sessions.onRecord = (record) => this.journal.append(RecordType.Session, encodeSession(record));
    this.journal.onDurable = (seq) => this.oplog.makeVisible(seq);
  }

  private snapshotWhenDue(): void {
    if (this.journal.bytesInFile < this.snapshotAfterBytes || this.snapshotScheduled || this.snapshotRunning) return;
    // Started after the current command, not in the middle of it.
    this.snapshotScheduled = true;
    setImmediate(() => {
      this.snapshotScheduled = false;
      void this.startSnapshot();
    });
  }

  /** Resolves once everything journaled so far is on disk (a write's reply waits for this). */
  waitForAppended(): Promise<void> {
    return this.journal.waitForAppended();
  }

  /** Rotates the journal and writes a snapshot in the background (at most one at a time). */
  startSnapshot(): Promise<void> {
    if (this.snapshotRunning || this.closed) return this.snapshotRunning ?? Promise.resolve();
    const retiredUpTo = this.nextJournal - 1;
    this.journal.rotate(path.join(this.dir, journalName(this.nextJournal++)));
    // Everything up to this seq is applied in memory and lives in the retired journal files.
    const seq = this.oplog.lastSeq;
    const ts: Timestamp = this.oplog.lastTimestamp;
    this.snapshotRunning = writeSnapshot(this.dir, this.store, this.sessions, seq, ts)
      .then(() => {
        for (const n of journalNumbers(this.dir)) if (n <= retiredUpTo) rmSync(path.join(this.dir, journalName(n)));
        syncDirectory(this.dir);
      })
      .catch((err) => {
        // The journal still holds everything: a failed snapshot only means a longer replay.
        console.error(`embedded MongoDB: snapshot failed: ${(err as Error).message}`);
      })
      .finally(() => {
        this.snapshotRunning = undefined;
      });
    return this.snapshotRunning;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.snapshotRunning;
    await this.journal.close();
    this.lock.release();
  }
}

function loadSnapshot(dir: string, loader: StoreLoader, sessions: Sessions): void {
  const file = path.join(dir, SNAPSHOT_FILE);
  if (!existsSync(file)) return;
  const { records } = readRecords(file);
  // A snapshot only replaces the previous one once complete (rename after fsync): it must end with its end record.
  const [first, ...body] = records;
  const end = body.pop();
  if (first?.type !== RecordType.SnapshotHeader || end?.type !== RecordType.SnapshotEnd) {
    throw new Error(`snapshot ${file} is incomplete or damaged`);
  }
  const header = decode(first.payload);
  let coll: Collection | undefined;
  for (const r of body) {
    if (r.type === RecordType.Document) loader.put(coll!, decode(r.payload));
    else if (r.type === RecordType.Collection) {
      const c = decode(r.payload);
      coll = loader.collection(c.db as string, c.coll as string, c.options as Document, c.uuid as Binary | undefined);
      for (const spec of c.indexes as Document[]) loader.addIndexSpec(coll, spec);
    } else if (r.type === RecordType.Session) sessions.restore(decodeSession(r.payload));
  }
  loader.lastSeq = Number(header.seq);
  loader.lastTs = header.ts as Timestamp;
  loader.snapshotTs = header.ts as Timestamp;
}

function truncate(file: string, length: number): void {
  const fd = openSync(file, "r+");
  try {
    ftruncateSync(fd, length);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
