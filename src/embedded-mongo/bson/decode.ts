// Decodes a command's BSON straight into the form numbers.ts holds values in (an int32 a JS number, a double a JS
// number or, holding an integer of the int32 range, a Double, an int64 a Long), for the types commands and documents
// carry. bson's deserializer decoded every number into a wrapper, which a second pass then held, built each key
// through an array of its bytes, and allocated a frame per embedded document: the decoding of a command was the
// largest share of the server's allocations (and so of its garbage collections). Keys and short values repeat from
// one document to the next, so their strings are taken from small caches when their bytes match. Anything else
// (regular expressions, code, DBRefs, DBPointers, old binary, strings that are not valid UTF-8) and malformed bytes
// are left to bson's deserializer, whose answers and errors are the reference.
import { Binary, Decimal128, type Document, deserialize, Long, MaxKey, MinKey, ObjectId, Timestamp, UUID } from "bson";
import { heldDouble, holdNumbers } from "./numbers.ts";

/** Thrown inside the decoder: the document is left to bson's deserializer. */
const LEFT_TO_BSON = Symbol("left to bson");

/** Node's UTF-8 decoding of a range of a buffer, without toString's argument handling. */
const utf8Slice = (Buffer.prototype as unknown as { utf8Slice(this: Buffer, start: number, end: number): string }).utf8Slice;

/** Slots of a cache of strings, a power of two: a string takes the slot of its hash, replacing the one there. */
const CACHE_BITS = 13;
/**
 * Strings by the hash of their bytes, checked byte for byte on every hit: keys, and short values (a status, a type,
 * a header's name), which repeat from one document to the next. A repeated value is then one string in memory where
 * every stored document held a copy of its own, each surviving young-generation collections with the document.
 * Arrays indexed by the hash's slot rather than maps: a document reads the cache once per key and short value, and
 * an array's slot is read without a map's hashing and probing. Unique values (ids) pass through the values' cache,
 * each replacing one slot's string.
 */
const keys = new Array<string | undefined>(1 << CACHE_BITS).fill(undefined);
const values = new Array<string | undefined>(1 << CACHE_BITS).fill(undefined);
/** The longest key, and the longest value, taken from a cache (ASCII only). */
const CACHED_KEY_BYTES = 64;
const CACHED_VALUE_BYTES = 32;

const DESERIALIZE_OPTIONS = { promoteValues: false, promoteBuffers: false, bsonRegExp: false };

/**
 * Decodes one BSON document (a command, a journal record) with its numbers held as numbers.ts holds them: here, or,
 * for what this decoder leaves to bson, by bson's deserializer with every number a wrapper, then held.
 */
export function decodeDocument(bytes: Uint8Array): Document {
  return decodeHeld(bytes) ?? holdNumbers(deserialize(bytes, DESERIALIZE_OPTIONS));
}

/** The document in the held form, or undefined when it is left to bson's deserializer. */
export function decodeHeld(bytes: Uint8Array): Document | undefined {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const size = buf.length;
  if (size < 5 || buf.readInt32LE(0) !== size || buf[size - 1] !== 0) return undefined;
  try {
    // A document left to bson's deserializer may have left its reading in the middle of an object.
    depth = 0;
    return readObject(buf, 4, size - 1);
  } catch (error) {
    if (error === LEFT_TO_BSON) return undefined;
    throw error;
  }
}

/** The ASCII string of buf[start, end) whose hash is `hash`, from `cache` when it holds it. */
function cached(cache: (string | undefined)[], buf: Buffer, start: number, end: number, hash: number): string {
  // The hash's bits mixed into the slot's (Fibonacci hashing): nearby hashes of similar strings spread apart.
  const slot = Math.imul(hash, 0x9e3779b1) >>> (32 - CACHE_BITS);
  const known = cache[slot];
  if (known !== undefined && known.length === end - start) {
    let same = true;
    for (let k = 0; k < known.length; k++) {
      if (known.charCodeAt(k) !== buf[start + k]) {
        same = false;
        break;
      }
    }
    if (same) return known;
  }
  const text = utf8Slice.call(buf, start, end);
  cache[slot] = text;
  return text;
}

/** A string value's text: a short ASCII one from the values' cache. */
function stringAt(buf: Buffer, start: number, end: number): string {
  if (end - start <= CACHED_VALUE_BYTES) {
    let hash = 0;
    let i = start;
    for (; i < end; i++) {
      const byte = buf[i]!;
      if (byte > 0x7f) break;
      hash = (Math.imul(hash, 31) + byte) | 0;
    }
    if (i === end) return cached(values, buf, start, end, hash);
  }
  const text = utf8Slice.call(buf, start, end);
  // A replacement character may stand for bytes that are not UTF-8, which bson's deserializer refuses (ASCII has none).
  if (text.includes("\uFFFD")) throw LEFT_TO_BSON;
  return text;
}

/**
 * The keys of the last top-level document read, by position: documents sent together (an insert's) have the same
 * fields in the same order, so a key is most often the one at its place in the last document, checked in one pass
 * over its bytes instead of hashed and then checked.
 */
const lastKeys: (string | undefined)[] = [];
/** Objects being read around the current one (0: a top-level document). */
let depth = 0;

/** Whether buf[at...] holds the ASCII `key` and its terminating byte, before `end`. */
function keyAt(buf: Buffer, at: number, end: number, key: string): boolean {
  const length = key.length;
  if (at + length >= end || buf[at + length] !== 0) return false;
  for (let k = 0; k < length; k++) if (buf[at + k] !== key.charCodeAt(k)) return false;
  return true;
}

/** The number of keys of the last top-level document read (lastKeys holds them). */
let lastKeyCount = 0;
/** The keys and values of the top-level document being read, by position, until it is built. */
const topKeys: string[] = [];
const topValues: unknown[] = [];
/** Builds a document of the last top-level document's keys from its values (see shapeBuilder). */
type ShapeBuilder = (values: unknown[]) => Document;
/** The builder of the documents shaped as the last one, once two in a row were. */
let lastShapeBuilder: ShapeBuilder | undefined;
/**
 * Builders by their keys joined (builderFor). Commands have shapes too (a find with a sort and a limit, an insert
 * in a session): the store and REST tests alone made 16. Past this many the map starts over, each shape then made
 * again when two documents of it come in a row.
 */
const shapeBuilders = new Map<string, ShapeBuilder>();
const MAX_SHAPE_BUILDERS = 256;
/** The most keys a built document has: beyond it the document is built key by key. */
const MAX_SHAPE_KEYS = 64;

/**
 * A function answering a new object of `keys` (in that order) holding `values` by position: one object literal,
 * which V8 allocates at once with every field inside the object. Built key by key from `{}`, a document of more than
 * four fields kept them in a separate array, grown and copied every few fields; a stored document keeps that array
 * for as long as it is stored, one object more for the garbage collector. Keys are written as JSON strings (no code
 * but the literal); a document with a `__proto__` key, which a literal would take for its prototype, is never built
 * so (see builderFor). A repeated key ends as it would key by key: at its first place, with its last value.
 */
function shapeBuilder(keys: readonly string[]): ShapeBuilder {
  const fields = keys.map((key, i) => `${JSON.stringify(key)}: v[${i}]`).join(", ");
  return new Function("v", `return { ${fields} };`) as ShapeBuilder;
}

/** The builder of documents of `count` keys as topKeys holds them, or undefined when they are built key by key. */
function builderFor(count: number): ShapeBuilder | undefined {
  if (count > MAX_SHAPE_KEYS) return undefined;
  const keys = topKeys.slice(0, count);
  const shape = keys.join("\0");
  let builder = shapeBuilders.get(shape);
  if (builder === undefined) {
    if (keys.includes("__proto__")) return undefined;
    if (shapeBuilders.size >= MAX_SHAPE_BUILDERS) shapeBuilders.clear();
    builder = shapeBuilder(keys);
    shapeBuilders.set(shape, builder);
  }
  return builder;
}

/**
 * A top-level document of `count` keys from topKeys and topValues: `sameShape`, its keys are those of the document
 * read before it (an insert's documents, one after the other), built by that shape's builder; otherwise key by key.
 */
function buildTopLevel(count: number, sameShape: boolean): Document {
  if (sameShape) {
    lastShapeBuilder ??= builderFor(count);
    if (lastShapeBuilder !== undefined) return lastShapeBuilder(topValues);
  }
  lastShapeBuilder = undefined;
  lastKeyCount = count;
  const doc: Document = {};
  for (let f = 0; f < count; f++) setField(doc, topKeys[f]!, topValues[f]);
  return doc;
}

/** Sets a field of a document being built (a `__proto__` key as its own field, not the prototype). */
function setField(doc: Document, key: string, fieldValue: unknown): void {
  if (key === "__proto__") Object.defineProperty(doc, key, { value: fieldValue, writable: true, enumerable: true, configurable: true });
  else doc[key] = fieldValue;
}

/** Where the key readKey read last ends (its terminating byte), and whether it came from the keys' cache. */
let keyEnd = 0;
let keyCached = false;

/** The key at `start` (a short ASCII one from the keys' cache); keyEnd and keyCached say where it ends and whence. */
function readKey(buf: Buffer, start: number, end: number): string {
  let i = start;
  let hash = 0;
  let ascii = true;
  for (let byte = buf[i]!; byte !== 0; byte = buf[++i]!) {
    if (i >= end) throw LEFT_TO_BSON;
    hash = (Math.imul(hash, 31) + byte) | 0;
    if (byte > 0x7f) ascii = false;
  }
  keyEnd = i;
  keyCached = ascii && i - start <= CACHED_KEY_BYTES;
  return keyCached ? cached(keys, buf, start, i, hash) : utf8Slice.call(buf, start, i);
}

/** A document's elements from `start` to its terminating byte at `end`. */
function readObject(buf: Buffer, start: number, end: number): Document {
  if (depth === 0) return readTopLevel(buf, start, end);
  const doc: Document = {};
  depth++;
  let i = start;
  while (i < end) {
    const type = buf[i++]!;
    const key = readKey(buf, i, end);
    // A DBRef is decoded as bson's class.
    if (key === "$ref") throw LEFT_TO_BSON;
    i = readValue(buf, type, keyEnd + 1, end);
    setField(doc, key, value);
  }
  depth--;
  if (i !== end) throw LEFT_TO_BSON;
  return doc;
}

/**
 * A top-level document (a command, an insert's document): each key checked first against the one at its place in
 * the last such document, and the document built once its keys are known (buildTopLevel).
 */
function readTopLevel(buf: Buffer, start: number, end: number): Document {
  depth++;
  let i = start;
  let sameShape = true;
  let field = 0;
  for (; i < end; field++) {
    const type = buf[i++]!;
    const predicted = lastKeys[field];
    let key: string;
    if (predicted !== undefined && keyAt(buf, i, end, predicted)) {
      key = predicted;
      i += predicted.length;
    } else {
      key = readKey(buf, i, end);
      i = keyEnd;
      lastKeys[field] = keyCached ? key : undefined;
      // lastKeys changes: the builder of its former keys no longer fits (even if this document is left to bson).
      sameShape = false;
      lastShapeBuilder = undefined;
    }
    // A DBRef is decoded as bson's class.
    if (key === "$ref") throw LEFT_TO_BSON;
    i = readValue(buf, type, i + 1, end);
    topKeys[field] = key;
    topValues[field] = value;
  }
  depth--;
  if (i !== end) throw LEFT_TO_BSON;
  return buildTopLevel(field, sameShape && field === lastKeyCount);
}

/** An array's elements from `start` to its terminating byte at `end` (their keys, "0", "1"..., are not read). */
function readArray(buf: Buffer, start: number, end: number): unknown[] {
  const array: unknown[] = [];
  let i = start;
  while (i < end) {
    const type = buf[i++]!;
    while (buf[i] !== 0) if (++i >= end) throw LEFT_TO_BSON;
    i = readValue(buf, type, i + 1, end);
    array.push(value);
  }
  if (i !== end) throw LEFT_TO_BSON;
  return array;
}

/** The value readValue read last: answered beside the index after it, without an object per value. */
let value: unknown;

/** Reads a value of `type` at `i` into `value`; answers the index after it (at most `end`). */
function readValue(buf: Buffer, type: number, i: number, end: number): number {
  switch (type) {
    case 0x01:
      if (i + 8 > end) throw LEFT_TO_BSON;
      value = heldDouble(buf.readDoubleLE(i));
      return i + 8;
    case 0x02:
    case 0x0e: {
      // A string, or a symbol (held as its string).
      if (i + 4 > end) throw LEFT_TO_BSON;
      const size = buf.readInt32LE(i);
      const stop = i + 4 + size - 1;
      if (size <= 0 || stop >= end || buf[stop] !== 0) throw LEFT_TO_BSON;
      value = stringAt(buf, i + 4, stop);
      return stop + 1;
    }
    case 0x03:
    case 0x04: {
      if (i + 4 > end) throw LEFT_TO_BSON;
      const size = buf.readInt32LE(i);
      const stop = i + size - 1;
      if (size < 5 || stop >= end || buf[stop] !== 0) throw LEFT_TO_BSON;
      const read = type === 0x03 ? readObject(buf, i + 4, stop) : readArray(buf, i + 4, stop);
      value = read;
      return stop + 1;
    }
    case 0x05: {
      if (i + 5 > end) throw LEFT_TO_BSON;
      const size = buf.readInt32LE(i);
      const subtype = buf[i + 4]!;
      // Subtype 2 (old binary) carries a second length, checked by bson's deserializer.
      if (size < 0 || subtype === 2 || i + 5 + size > end) throw LEFT_TO_BSON;
      const binary = new Binary(buf.subarray(i + 5, i + 5 + size), subtype);
      value = subtype === Binary.SUBTYPE_UUID && UUID.isValid(binary) ? binary.toUUID() : binary;
      return i + 5 + size;
    }
    case 0x06:
      value = undefined;
      return i;
    case 0x07:
      if (i + 12 > end) throw LEFT_TO_BSON;
      value = new ObjectId(buf.subarray(i, i + 12));
      return i + 12;
    case 0x08: {
      const byte = buf[i];
      if (i + 1 > end || (byte !== 0 && byte !== 1)) throw LEFT_TO_BSON;
      value = byte === 1;
      return i + 1;
    }
    case 0x09:
      if (i + 8 > end) throw LEFT_TO_BSON;
      value = new Date(buf.readInt32LE(i + 4) * 4294967296 + buf.readUInt32LE(i));
      return i + 8;
    case 0x0a:
      value = null;
      return i;
    case 0x10:
      if (i + 4 > end) throw LEFT_TO_BSON;
      value = buf.readInt32LE(i);
      return i + 4;
    case 0x11:
      if (i + 8 > end) throw LEFT_TO_BSON;
      value = new Timestamp({ i: buf.readUInt32LE(i), t: buf.readUInt32LE(i + 4) });
      return i + 8;
    case 0x12:
      if (i + 8 > end) throw LEFT_TO_BSON;
      value = new Long(buf.readInt32LE(i), buf.readInt32LE(i + 4));
      return i + 8;
    case 0x13:
      if (i + 16 > end) throw LEFT_TO_BSON;
      value = new Decimal128(Buffer.from(buf.subarray(i, i + 16)));
      return i + 16;
    case 0x7f:
      value = new MaxKey();
      return i;
    case 0xff:
      value = new MinKey();
      return i;
    default:
      throw LEFT_TO_BSON;
  }
}
