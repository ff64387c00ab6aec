/**
 * Requests made in the same event-loop turn are written together by one call of `write`, which answers each
 * request in order: a value, or an Error that fails that request alone. A failure of the whole write fails them all.
 * With `oneAtATime`, a write waits for the one before it to end, and everything requested meanwhile goes into it:
 * under load, few large writes instead of many small ones. With `windowMs`, the first request of a batch waits that
 * long for others (for requests whose callers need not hear back at once). With `maxItems`, a write takes at most that
 * many (the rest wait for the next), and a full batch is written at once.
 */
export class TurnBatch<T, R = void> {
  private pending: { item: T; resolve: (result: R) => void; reject: (error: unknown) => void }[] = [];
  private writing = false;
  private window: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly write: (items: T[]) => Promise<(R | Error)[]>,
    private readonly options: { oneAtATime?: boolean; windowMs?: number; maxItems?: number } = {},
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const count = this.pending.push({ item, resolve, reject });
      if (this.writing) return;
      if (count === this.options.maxItems) void this.flush();
      else if (count === 1) this.schedule();
    });
  }

  private schedule(): void {
    if (this.options.windowMs === undefined) setImmediate(() => void this.flush());
    else this.window = setTimeout(() => void this.flush(), this.options.windowMs);
  }

  private async flush(): Promise<void> {
    clearTimeout(this.window);
    this.window = undefined;
    if (this.pending.length === 0) return;
    const { maxItems } = this.options;
    const batch = maxItems !== undefined && this.pending.length > maxItems ? this.pending.splice(0, maxItems) : this.pending;
    if (batch === this.pending) this.pending = [];
    this.writing = this.options.oneAtATime === true;
    // What a capped batch left behind is written next: after this write with oneAtATime, else at once.
    if (!this.writing && this.pending.length > 0) this.schedule();
    try {
      const results = await this.write(batch.map((p) => p.item));
      batch.forEach((p, i) => {
        const result = results[i] as R | Error;
        if (result instanceof Error) p.reject(result);
        else p.resolve(result);
      });
    } catch (error) {
      for (const p of batch) p.reject(error);
    } finally {
      if (this.writing) {
        this.writing = false;
        if (this.pending.length > 0) this.schedule();
      }
    }
  }
}

/**
 * A read by id whose calls made in the same event-loop turn share one read of them all (`read` answers the
 * documents of those ids that exist): many concurrent runs each reading one document cost one round trip per turn.
 */
export function turnBatchedReads<T extends { _id: string }>(read: (ids: string[]) => Promise<T[]>): (id: string) => Promise<T | null> {
  const reads = new TurnBatch<string, T | null>(async (ids) => {
    const found = new Map((await read([...new Set(ids)])).map((doc) => [doc._id, doc]));
    return ids.map((id) => found.get(id) ?? null);
  });
  return (id) => reads.add(id);
}
