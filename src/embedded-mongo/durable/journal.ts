// The journal: records appended in memory, then written and fdatasync'ed by one flush loop. Appends that arrive
// while a flush is in progress share the next flush (group commit), so many concurrent writers cost one disk
// sync. A writer waits for the flush that covers its records before its write is acknowledged.
import { closeSync, fdatasync, fsyncSync, openSync, writeSync } from "node:fs";
import { promisify } from "node:util";
import { frameRecord } from "./record-file.ts";

const fdatasyncAsync = promisify(fdatasync);

interface Pending {
  fd: number;
  buf: Buffer;
  /** Highest oplog seq among the records of `buf` (0: none). */
  seq: number;
  /** Number of the last record in `buf` (records are numbered 1, 2, 3... in append order). */
  recordNo: number;
}

interface Waiter {
  recordNo: number;
  resolve(): void;
  reject(err: Error): void;
}

/** fsyncs a directory, so that a file created (or renamed) in it survives a crash. */
export function syncDirectory(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export class Journal {
  private pending: Pending[] = [];
  private appended = 0;
  private durable = 0;
  private flushing = false;
  private waiters: Waiter[] = [];
  private failure?: Error;
  private fd: number;
  /** Bytes appended to the current file (the snapshot policy looks at it). */
  bytesInFile: number;
  /** Files written before the current one, still needed until a snapshot covers them. */
  private readonly retired: { fd: number; lastRecordNo: number }[] = [];
  /** Told the highest oplog seq that is on disk after each flush. */
  onDurable?: (seq: number) => void;
  private idle?: (() => void) | undefined;

  constructor(
    private readonly dir: string,
    public path: string,
    existingBytes: number,
  ) {
    this.fd = openSync(path, "a");
    this.bytesInFile = existingBytes;
    syncDirectory(dir);
  }

  /** Appends one record; `seq` is its oplog seq when it is an oplog entry. */
  append(type: number, payload: Uint8Array, seq = 0): void {
    if (this.failure) throw this.failure;
    const buf = frameRecord(type, payload);
    this.bytesInFile += buf.length;
    this.appended++;
    this.pending.push({ fd: this.fd, buf, seq, recordNo: this.appended });
    if (!this.flushing) {
      this.flushing = true;
      // Start on the next tick, so the records of one command (and of pipelined ones) share the flush.
      setImmediate(() => void this.flushLoop());
    }
  }

  /** Resolves once every record appended so far is on disk. */
  waitForAppended(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.durable >= this.appended) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ recordNo: this.appended, resolve, reject }));
  }

  /**
   * Continues in a new file (records appended from now on go there); the current file is closed once its
   * records are flushed. Returns the number of the last record of the old file.
   */
  rotate(newPath: string): number {
    this.retired.push({ fd: this.fd, lastRecordNo: this.appended });
    this.fd = openSync(newPath, "a");
    this.path = newPath;
    this.bytesInFile = 0;
    syncDirectory(this.dir);
    return this.appended;
  }

  /** Flushes everything and closes the files. */
  async close(): Promise<void> {
    if (this.flushing) await new Promise<void>((resolve) => (this.idle = resolve));
    for (const r of this.retired.splice(0)) closeSync(r.fd);
    closeSync(this.fd);
  }

  private async flushLoop(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const batch = this.pending;
        this.pending = [];
        let fd = batch[0]!.fd;
        let chunk: Buffer[] = [];
        for (const p of batch) {
          if (p.fd !== fd) {
            await this.writeAndSync(fd, chunk);
            chunk = [];
            fd = p.fd;
          }
          chunk.push(p.buf);
        }
        await this.writeAndSync(fd, chunk);
        const last = batch[batch.length - 1]!;
        this.durable = last.recordNo;
        const seq = batch.reduce((max, p) => Math.max(max, p.seq), 0);
        this.closeRetired();
        this.release();
        if (seq > 0) this.onDurable?.(seq);
      }
    } catch (err) {
      // The disk refused a write: nothing later can be acknowledged as durable.
      this.failure = err as Error;
      for (const w of this.waiters.splice(0)) w.reject(this.failure);
    } finally {
      this.flushing = false;
      this.idle?.();
      this.idle = undefined;
    }
  }

  private async writeAndSync(fd: number, chunk: Buffer[]): Promise<void> {
    // The write only copies into the page cache (microseconds): done inline, it saves a thread-pool round trip
    // per flush; the sync, which waits for the device, runs on the thread pool.
    for (const buf of chunk.length > 64 ? [Buffer.concat(chunk)] : chunk) {
      let written = 0;
      while (written < buf.length) written += writeSync(fd, buf, written);
    }
    await fdatasyncAsync(fd);
  }

  private closeRetired(): void {
    while (this.retired.length > 0 && this.retired[0]!.lastRecordNo <= this.durable) closeSync(this.retired.shift()!.fd);
  }

  private release(): void {
    let kept = 0;
    for (const w of this.waiters) {
      if (w.recordNo <= this.durable) w.resolve();
      else this.waiters[kept++] = w;
    }
    this.waiters.length = kept;
  }
}
