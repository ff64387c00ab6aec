// A sorted container of index entries: a list of sorted chunks (a two-level B-tree). Lookups, inserts and deletes
// are O(log n) comparisons plus a bounded splice, so index operations cost the same at 1M entries as at 10k.
// A copy shares the chunks with its original (one entry per chunk, not per entry: a transaction's private copy
// of an index is cheap); whichever side changes a chunk first after the copy changes its own copy of it.
// An insert's search reads each entry's rank first (a number abbreviating its place, kept in arrays beside the
// chunks), and the entry itself only where the ranks do not decide.

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
  /**
   * ranks[i][j]: the rank of chunks[i][j], and lastRanks[i] that of lasts[i] (see `rank`). Numbers held in arrays
   * of their own: a random key's insert compares it with some twenty entries, and reading a rank from a contiguous
   * array spares reaching through each entry to its key (two cache misses each in a large index).
   */
  private ranks: number[][] = [];
  private lastRanks: number[] = [];
  /** owners[i]: the copy generation that may change chunks[i] in place. */
  private owners: number[] = [];
  private generation = ++generations;
  private count = 0;

  /**
   * `rank`: a number for an entry such that rank(a) < rank(b) only where compare(a, b) < 0, or NaN where it cannot
   * tell (equal ranks, or a NaN, leave the order to `compare`). Without it every rank is NaN.
   */
  constructor(
    private readonly compare: (a: T, b: T) => number,
    private readonly rank: (item: T) => number = () => Number.NaN,
  ) {}

  get size(): number {
    return this.count;
  }

  /** Takes the entries of `other` (same order), sharing its chunks until either side changes one. */
  copyFrom(other: OrderedSet<T>): void {
    this.chunks = other.chunks.slice();
    this.lasts = other.lasts.slice();
    this.ranks = other.ranks.slice();
    this.lastRanks = other.lastRanks.slice();
    this.owners = other.owners.slice();
    this.count = other.count;
    // Neither side owns the shared chunks any more.
    other.generation = ++generations;
    this.generation = ++generations;
  }

  clear(): void {
    this.chunks = [];
    this.lasts = [];
    this.ranks = [];
    this.lastRanks = [];
    this.owners = [];
    this.count = 0;
  }

  /** chunks[index] and its ranks, made this set's own to change. */
  private writable(index: number): T[] {
    const chunk = this.chunks[index]!; // callers pass an existing chunk's index
    if (this.owners[index] === this.generation) return chunk;
    const own = chunk.slice();
    this.chunks[index] = own;
    this.ranks[index] = this.ranks[index]!.slice();
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
    const rank = this.rank(item);
    if (this.chunks.length === 0) {
      this.chunks.push([item]);
      this.ranks.push([rank]);
      this.lasts.push(item);
      this.lastRanks.push(rank);
      this.owners.push(this.generation);
      this.count = 1;
      return;
    }
    const last = this.chunks.length - 1;
    const lastChunk = this.chunks[last]!;
    if (precedes(this.lastRanks[last]!, this.lasts[last]!, rank, item, cmp)) {
      // Past the end (keys that grow: time-ordered ids, a lone tenant's time keys): one comparison instead of a
      // search, and a full last chunk is followed by a new one rather than halved, as nothing will come before it.
      if (lastChunk.length < MAX_CHUNK) {
        this.writable(last).push(item);
        this.ranks[last]!.push(rank);
        this.lasts[last] = item;
        this.lastRanks[last] = rank;
      } else {
        this.chunks.push([item]);
        this.ranks.push([rank]);
        this.lasts.push(item);
        this.lastRanks.push(rank);
        this.owners.push(this.generation);
      }
      this.count++;
      return;
    }
    // Keys that grow with ties broken at random (time-ordered ids within a millisecond) land in the last chunk:
    // searched alone, without the search among chunks.
    let chunkAt = last;
    if (!precedes(this.ranks[last]![0]!, lastChunk[0]!, rank, item, cmp)) {
      // The first chunk whose last entry does not precede the item.
      let lo = 0;
      let hi = last;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (precedes(this.lastRanks[mid]!, this.lasts[mid]!, rank, item, cmp)) lo = mid + 1;
        else hi = mid;
      }
      chunkAt = lo;
    }
    let offset = rankedSearch(this.chunks[chunkAt]!, this.ranks[chunkAt]!, rank, item, cmp);
    if (offset === 0 && chunkAt > 0) {
      // Between two chunks, appended to the earlier one: no entry moves, and keys that grow within a range followed
      // by others (a tenant's time-ordered keys) go on being appended there.
      chunkAt--;
      offset = this.chunks[chunkAt]!.length;
    }
    const chunk = this.writable(chunkAt);
    const ranks = this.ranks[chunkAt]!;
    chunk.splice(offset, 0, item);
    ranks.splice(offset, 0, rank);
    if (offset === chunk.length - 1) {
      this.lasts[chunkAt] = item;
      this.lastRanks[chunkAt] = rank;
    }
    this.count++;
    if (chunk.length > MAX_CHUNK) {
      // Cut just after the new entry when that leaves both parts a fair size: its chunk then ends with it, and the
      // next larger key appends instead of moving the entries that followed it. Otherwise in halves. The last
      // chunk's tail may be short: the keys that grow past the end will fill it.
      const after = offset + 1;
      const tailFair = chunkAt === this.chunks.length - 1 ? after < chunk.length : chunk.length - after >= MAX_CHUNK / 8;
      const at = after >= MAX_CHUNK / 4 && tailFair ? after : MAX_CHUNK >>> 1;
      const tail = chunk.splice(at);
      const tailRanks = ranks.splice(at);
      this.chunks.splice(chunkAt + 1, 0, tail);
      this.ranks.splice(chunkAt + 1, 0, tailRanks);
      this.lasts[chunkAt] = chunk[chunk.length - 1]!;
      this.lastRanks[chunkAt] = ranks[ranks.length - 1]!;
      this.lasts.splice(chunkAt + 1, 0, tail[tail.length - 1]!);
      this.lastRanks.splice(chunkAt + 1, 0, tailRanks[tailRanks.length - 1]!);
      this.owners.splice(chunkAt + 1, 0, this.generation);
    }
  }

  /** Removes the entry comparing equal to `item`; returns whether one was found. */
  delete(item: T): boolean {
    const cmp = this.compare;
    const pos = this.seek((e) => cmp(e, item) < 0);
    const found = this.chunks[pos.chunk];
    if (!found || pos.offset >= found.length || cmp(found[pos.offset]!, item) !== 0) return false;
    const chunk = this.writable(pos.chunk);
    const ranks = this.ranks[pos.chunk]!;
    chunk.splice(pos.offset, 1);
    ranks.splice(pos.offset, 1);
    this.count--;
    if (chunk.length === 0) {
      this.chunks.splice(pos.chunk, 1);
      this.ranks.splice(pos.chunk, 1);
      this.lasts.splice(pos.chunk, 1);
      this.lastRanks.splice(pos.chunk, 1);
      this.owners.splice(pos.chunk, 1);
    } else if (pos.offset === chunk.length) {
      this.lasts[pos.chunk] = chunk[pos.offset - 1]!;
      this.lastRanks[pos.chunk] = ranks[pos.offset - 1]!;
    }
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

/** Whether the entry of rank `entryRank` comes before the item of rank `itemRank`: by the ranks when they tell. */
function precedes<T>(entryRank: number, entry: T, itemRank: number, item: T, cmp: (a: T, b: T) => number): boolean {
  if (entryRank < itemRank) return true;
  if (entryRank > itemRank) return false;
  return cmp(entry, item) < 0;
}

/** The first offset in `chunk` whose entry does not come before the item (`ranks`: the chunk's ranks). */
function rankedSearch<T>(chunk: T[], ranks: number[], itemRank: number, item: T, cmp: (a: T, b: T) => number): number {
  let a = 0;
  let b = chunk.length;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if (precedes(ranks[mid]!, chunk[mid]!, itemRank, item, cmp)) a = mid + 1;
    else b = mid;
  }
  return a;
}
