// A sorted container of index entries: a list of sorted chunks (a two-level B-tree). Lookups, inserts and deletes
// are O(log n) comparisons plus a bounded splice, so index operations cost the same at 1M entries as at 10k.
// A copy shares the chunks with its original (one entry per chunk, not per entry: a transaction's private copy
// of an index is cheap); whichever side changes a chunk first after the copy changes its own copy of it.

const MAX_CHUNK = 512;

let generations = 0;

export interface Position {
  chunk: number;
  offset: number;
}

export class OrderedSet<T> {
  /** Never an empty chunk: one emptied by a delete is removed. */
  private chunks: T[][] = [];
  /**
   * lasts[i]: the last entry of chunks[i]. The search among chunks reads these, one array, rather than reaching
   * through each chunk it visits to its end: a random key's insert visits a dozen chunks, each a cache miss more.
   */
  private lasts: T[] = [];
  /** owners[i]: the copy generation that may change chunks[i] in place. */
  private owners: number[] = [];
  private generation = ++generations;
  private count = 0;

  constructor(private readonly compare: (a: T, b: T) => number) {}

  get size(): number {
    return this.count;
  }

  /** Takes the entries of `other` (same order), sharing its chunks until either side changes one. */
  copyFrom(other: OrderedSet<T>): void {
    this.chunks = other.chunks.slice();
    this.lasts = other.lasts.slice();
    this.owners = other.owners.slice();
    this.count = other.count;
    // Neither side owns the shared chunks any more.
    other.generation = ++generations;
    this.generation = ++generations;
  }

  clear(): void {
    this.chunks = [];
    this.lasts = [];
    this.owners = [];
    this.count = 0;
  }

  /** chunks[index], made this set's own to change. */
  private writable(index: number): T[] {
    const chunk = this.chunks[index]!; // callers pass an existing chunk's index
    if (this.owners[index] === this.generation) return chunk;
    const own = chunk.slice();
    this.chunks[index] = own;
    this.owners[index] = this.generation;
    return own;
  }

  /** First position whose entry is not `before` the target (`before` must be monotone over the order). */
  seek(before: (entry: T) => boolean): Position {
    const chunks = this.chunks;
    const lasts = this.lasts;
    let lo = 0;
    let hi = chunks.length;
    // Find the first chunk whose last entry is not before the target.
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(lasts[mid]!)) lo = mid + 1;
      else hi = mid;
    }
    if (lo === chunks.length) return { chunk: lo, offset: 0 };
    return { chunk: lo, offset: searchChunk(chunks[lo]!, before) };
  }

  insert(item: T): void {
    const cmp = this.compare;
    if (this.chunks.length === 0) {
      this.chunks.push([item]);
      this.lasts.push(item);
      this.owners.push(this.generation);
      this.count = 1;
      return;
    }
    const last = this.chunks.length - 1;
    const lastChunk = this.chunks[last]!;
    if (cmp(this.lasts[last]!, item) < 0) {
      // Past the end (keys that grow: time-ordered ids, a lone tenant's time keys): one comparison instead of a
      // search, and a full last chunk is followed by a new one rather than halved, as nothing will come before it.
      if (lastChunk.length < MAX_CHUNK) {
        this.writable(last).push(item);
        this.lasts[last] = item;
      } else {
        this.chunks.push([item]);
        this.lasts.push(item);
        this.owners.push(this.generation);
      }
      this.count++;
      return;
    }
    // Keys that grow with ties broken at random (time-ordered ids within a millisecond) land in the last chunk:
    // searched alone, without the search among chunks. (The tests are written in place: a closure held in a
    // constant would be named again on every insert by the TypeScript loader.)
    let pos =
      cmp(lastChunk[0]!, item) < 0 ? { chunk: last, offset: searchChunk(lastChunk, (e) => cmp(e, item) < 0) } : this.seek((e) => cmp(e, item) < 0);
    if (pos.offset === 0 && pos.chunk > 0) {
      // Between two chunks (or past the end), appended to the earlier one: no entry moves, and keys that grow
      // within a range followed by others (a tenant's time-ordered keys) go on being appended there.
      pos = { chunk: pos.chunk - 1, offset: this.chunks[pos.chunk - 1]!.length };
    }
    const chunk = this.writable(pos.chunk);
    chunk.splice(pos.offset, 0, item);
    if (pos.offset === chunk.length - 1) this.lasts[pos.chunk] = item;
    this.count++;
    if (chunk.length > MAX_CHUNK) {
      // Cut just after the new entry when that leaves both parts a fair size: its chunk then ends with it, and the
      // next larger key appends instead of moving the entries that followed it. Otherwise in halves. The last
      // chunk's tail may be short: the keys that grow past the end will fill it.
      const after = pos.offset + 1;
      const tailFair = pos.chunk === this.chunks.length - 1 ? after < chunk.length : chunk.length - after >= MAX_CHUNK / 8;
      const at = after >= MAX_CHUNK / 4 && tailFair ? after : MAX_CHUNK >>> 1;
      const tail = chunk.splice(at);
      this.chunks.splice(pos.chunk + 1, 0, tail);
      this.lasts[pos.chunk] = chunk[chunk.length - 1]!;
      this.lasts.splice(pos.chunk + 1, 0, tail[tail.length - 1]!);
      this.owners.splice(pos.chunk + 1, 0, this.generation);
    }
  }

  /** Removes the entry comparing equal to `item`; returns whether one was found. */
  delete(item: T): boolean {
    const cmp = this.compare;
    const pos = this.seek((e) => cmp(e, item) < 0);
    const found = this.chunks[pos.chunk];
    if (!found || pos.offset >= found.length || cmp(found[pos.offset]!, item) !== 0) return false;
    const chunk = this.writable(pos.chunk);
    chunk.splice(pos.offset, 1);
    this.count--;
    if (chunk.length === 0) {
      this.chunks.splice(pos.chunk, 1);
      this.lasts.splice(pos.chunk, 1);
      this.owners.splice(pos.chunk, 1);
    } else if (pos.offset === chunk.length) this.lasts[pos.chunk] = chunk[pos.offset - 1]!;
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

/** The first offset in `chunk` whose entry is not `before` the target. */
function searchChunk<T>(chunk: T[], before: (entry: T) => boolean): number {
  let a = 0;
  let b = chunk.length;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if (before(chunk[mid]!)) a = mid + 1;
    else b = mid;
  }
  return a;
}
