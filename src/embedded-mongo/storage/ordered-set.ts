// A sorted container of index entries: a list of sorted chunks (a two-level B-tree). Lookups, inserts and deletes
// are O(log n) comparisons plus a bounded splice, so index operations cost the same at 1M entries as at 10k.

const MAX_CHUNK = 512;

export interface Position {
  chunk: number;
  offset: number;
}

export class OrderedSet<T> {
  /** Never an empty chunk: one emptied by a delete is removed. */
  private chunks: T[][] = [];
  private count = 0;

  constructor(private readonly compare: (a: T, b: T) => number) {}

  get size(): number {
    return this.count;
  }

  /** Takes the entries of `other` (same order), copying its chunks instead of inserting one by one. */
  copyFrom(other: OrderedSet<T>): void {
    this.chunks = other.chunks.map((chunk) => chunk.slice());
    this.count = other.count;
  }

  clear(): void {
    this.chunks = [];
    this.count = 0;
  }

  /** First position whose entry is not `before` the target (`before` must be monotone over the order). */
  seek(before: (entry: T) => boolean): Position {
    const chunks = this.chunks;
    let lo = 0;
    let hi = chunks.length;
    // Find the first chunk whose last entry is not before the target.
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = chunks[mid]!;
      if (before(c[c.length - 1]!)) lo = mid + 1;
      else hi = mid;
    }
    if (lo === chunks.length) return { chunk: lo, offset: 0 };
    const c = chunks[lo]!;
    let a = 0;
    let b = c.length;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (before(c[mid]!)) a = mid + 1;
      else b = mid;
    }
    return { chunk: lo, offset: a };
  }

  insert(item: T): void {
    const cmp = this.compare;
    if (this.chunks.length === 0) {
      this.chunks.push([item]);
      this.count = 1;
      return;
    }
    let pos = this.seek((e) => cmp(e, item) < 0);
    let chunk = this.chunks[pos.chunk];
    if (!chunk) {
      // Past the end: appended to the last chunk (there is one, checked above).
      chunk = this.chunks[pos.chunk - 1]!;
      pos = { chunk: pos.chunk - 1, offset: chunk.length };
    }
    chunk.splice(pos.offset, 0, item);
    this.count++;
    if (chunk.length > MAX_CHUNK) {
      const tail = chunk.splice(MAX_CHUNK >>> 1);
      this.chunks.splice(pos.chunk + 1, 0, tail);
    }
  }

  /** Removes the entry comparing equal to `item`; returns whether one was found. */
  delete(item: T): boolean {
    const cmp = this.compare;
    const pos = this.seek((e) => cmp(e, item) < 0);
    const chunk = this.chunks[pos.chunk];
    if (!chunk || pos.offset >= chunk.length || cmp(chunk[pos.offset]!, item) !== 0) return false;
    chunk.splice(pos.offset, 1);
    this.count--;
    if (chunk.length === 0) this.chunks.splice(pos.chunk, 1);
    return true;
  }

  at(pos: Position): T | undefined {
    return this.chunks[pos.chunk]?.[pos.offset];
  }

  /** Visits entries from `pos` forward until `visit` returns false. */
  forwardFrom(pos: Position, visit: (entry: T) => boolean): void {
    const chunks = this.chunks;
    let offset = pos.offset;
    for (let c = pos.chunk; c < chunks.length; c++, offset = 0) {
      const chunk = chunks[c]!;
      for (let i = offset; i < chunk.length; i++) if (!visit(chunk[i]!)) return;
    }
  }

  /** Visits entries strictly before `pos`, going backward, until `visit` returns false. */
  backwardFrom(pos: Position, visit: (entry: T) => boolean): void {
    const chunks = this.chunks;
    let c = pos.chunk;
    let i = pos.offset - 1;
    if (c >= chunks.length) {
      c = chunks.length - 1;
      i = c >= 0 ? chunks[c]!.length - 1 : -1;
    }
    while (c >= 0) {
      const chunk = chunks[c]!;
      for (; i >= 0; i--) if (!visit(chunk[i]!)) return;
      c--;
      if (c >= 0) i = chunks[c]!.length - 1;
    }
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (const chunk of this.chunks) yield* chunk;
  }
}
