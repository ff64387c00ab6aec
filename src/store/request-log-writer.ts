// Writes request logs in batches, off the path of the calls they record: `record` only appends to a bounded
// buffer; a batch is written when it is full or a short interval after its first entry, one batch at a time.
// A failed write is reported and its entries dropped; a full buffer drops new entries (counted, reported once
// per batch written): recording never fails, delays or holds the memory of the calls it records.
import type { RequestLogDocument, RequestLogRepository } from "./request-log-repository.ts";

export interface RequestLogWriterOptions {
  /** Entries per insert; a full batch is written at once. */
  batchSize: number;
  /** How long the first entry of a batch waits for others. */
  flushIntervalMs: number;
  /** Entries held at most, written or waiting; beyond it new entries are dropped. */
  maxBuffered: number;
  /** Hears of a failed write and of dropped entries; never of a call's failure. */
  onError: (error: unknown) => void;
}

export const DEFAULT_REQUEST_LOG_WRITER: Omit<RequestLogWriterOptions, "onError"> = {
  batchSize: 500,
  flushIntervalMs: 200,
  maxBuffered: 20_000,
};

export class RequestLogWriter {
  private buffer: RequestLogDocument[] = [];
  /** Entries of the batch being written. */
  private writing = 0;
  private inFlight: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private dropped = 0;

  constructor(
    private readonly repository: RequestLogRepository,
    private readonly options: RequestLogWriterOptions,
  ) {}

  record(log: RequestLogDocument): void {
    if (this.buffer.length + this.writing >= this.options.maxBuffered) {
      this.dropped++;
      return;
    }
    this.buffer.push(log);
    if (this.buffer.length >= this.options.batchSize) this.writeNext();
    else this.timer ??= setTimeout(() => this.writeNext(), this.options.flushIntervalMs).unref();
  }

  /** Writes everything recorded so far (the drain at shutdown); answers when it is written or reported. */
  async flush(): Promise<void> {
    while (this.inFlight || this.buffer.length > 0) {
      if (!this.inFlight) this.writeNext();
      await this.inFlight;
    }
  }

  /** Starts the next batch unless one is being written (its end starts the next). */
  private writeNext(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.inFlight || this.buffer.length === 0) return;
    const batch = this.buffer.splice(0, this.options.batchSize);
    this.writing = batch.length;
    this.inFlight = this.repository
      .insertMany(batch)
      .catch((error: unknown) => this.options.onError(error))
      .finally(() => {
        this.writing = 0;
        this.inFlight = null;
        this.reportDropped();
        if (this.buffer.length >= this.options.batchSize) this.writeNext();
        else if (this.buffer.length > 0) this.timer ??= setTimeout(() => this.writeNext(), this.options.flushIntervalMs).unref();
      });
  }

  private reportDropped(): void {
    if (this.dropped === 0) return;
    const dropped = this.dropped;
    this.dropped = 0;
    this.options.onError(new Error(`${dropped} request logs were dropped: the buffer was full while the database was slow or failing`));
  }
}
