// A collection's documents by record id, in record id order (the collection's natural order: an insert takes a
// larger record id than any before it, an update keeps its record's). Records sit in chunks of 512 consecutive
// ids, so a lookup is two array reads, and a copy shares every chunk with its original: a transaction's private
// copy of a collection costs one entry per chunk, not one per document. Whichever side writes a chunk first after
// a copy writes its own copy of that chunk (copy on write); a chunk is never changed while another map holds it.

const CHUNK_BITS = 9;
const CHUNK_SIZE = 1 << CHUNK_BITS;

interface RecordChunk<T> {
  /** Slot rid % CHUNK_SIZE; undefined: no record. Grows as slots are filled. */
  records: (T | undefined)[];
  /** Records held. A chunk left empty is dropped. */
  count: number;
  /** The copy generation of the map that may write it in place. */
  owner: number;
}

let generations = 0;

export class RecordMap<T> {
  /** chunks[i] holds record ids (base + i) * CHUNK_SIZE onwards; undefined: none of them. */
  private chunks: (RecordChunk<T> | undefined)[] = [];
  private base = 0;
  private count = 0;
  private generation = ++generations;

  get size(): number {
    return this.count;
  }

  get(rid: number): T | undefined {
    return this.chunks[chunkNumber(rid) - this.base]?.records[rid % CHUNK_SIZE];
  }

  has(rid: number): boolean {
    return this.get(rid) !== undefined;
  }

  /** Stores `record` under `rid` (iteration follows record ids, whatever order they were stored in). */
  set(rid: number, record: T): void {
    const chunk = this.writableChunk(chunkNumber(rid));
    const slot = rid % CHUNK_SIZE;
    if (chunk.records[slot] === undefined) {
      chunk.count++;
      this.count++;
    }
    while (chunk.records.length < slot) chunk.records.push(undefined);
    chunk.records[slot] = record;
  }

  delete(rid: number): boolean {
    const index = chunkNumber(rid) - this.base;
    const slot = rid % CHUNK_SIZE;
    if (this.chunks[index]?.records[slot] === undefined) return false;
    const chunk = this.writableChunk(index + this.base);
    chunk.records[slot] = undefined;
    this.count--;
    if (--chunk.count === 0) this.dropChunk(index);
    return true;
  }

  /** A map holding the same records, sharing every chunk until one side writes it. */
  copy(): RecordMap<T> {
    const copy = new RecordMap<T>();
    copy.chunks = this.chunks.slice();
    copy.base = this.base;
    copy.count = this.count;
    // Neither side owns the shared chunks any more.
    this.generation = ++generations;
    return copy;
  }

  /** [record id, record] in record id order. Records stored meanwhile are visited when they come after the current one. */
  *[Symbol.iterator](): IterableIterator<[number, T]> {
    for (let number = this.base; number - this.base < this.chunks.length; number++) {
      for (let slot = 0; ; slot++) {
        // Looked up again for each slot: a write meanwhile may have replaced or dropped the chunk.
        const records = this.chunks[number - this.base]?.records;
        if (!records || slot >= records.length) break;
        const record = records[slot];
        if (record !== undefined) yield [number * CHUNK_SIZE + slot, record];
      }
    }
  }

  /** The records in record id order, as the iterator visits them. */
  *values(): IterableIterator<T> {
    for (let number = this.base; number - this.base < this.chunks.length; number++) {
      for (let slot = 0; ; slot++) {
        const records = this.chunks[number - this.base]?.records;
        if (!records || slot >= records.length) break;
        const record = records[slot];
        if (record !== undefined) yield record;
      }
    }
  }

  *keys(): IterableIterator<number> {
    for (const [rid] of this) yield rid;
  }

  private writableChunk(number: number): RecordChunk<T> {
    if (this.chunks.length === 0) this.base = number;
    if (number < this.base) {
      this.chunks.unshift(...new Array<undefined>(this.base - number));
      this.base = number;
    }
    const index = number - this.base;
    const chunk = this.chunks[index];
    if (chunk?.owner === this.generation) return chunk;
    const own: RecordChunk<T> = chunk
      ? { records: chunk.records.slice(), count: chunk.count, owner: this.generation }
      : { records: [], count: 0, owner: this.generation };
    while (this.chunks.length < index) this.chunks.push(undefined);
    this.chunks[index] = own;
    return own;
  }

  /** Drops an emptied chunk, and the empty chunks at either end, so scans do not walk deleted history. */
  private dropChunk(index: number): void {
    this.chunks[index] = undefined;
    while (this.chunks.length > 0 && this.chunks[this.chunks.length - 1] === undefined) this.chunks.pop();
    let leading = 0;
    while (leading < this.chunks.length && this.chunks[leading] === undefined) leading++;
    if (leading > 0) {
      this.chunks.splice(0, leading);
      this.base += leading;
    }
  }
}

function chunkNumber(rid: number): number {
  return Math.floor(rid / CHUNK_SIZE);
}
