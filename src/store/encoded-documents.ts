// Documents held as BSON, one after another in one buffer, until an insert sends them as they are. A batch of
// entries held for a while as objects (each a graph of a few heap objects) lives long enough for the young
// generation to promote it to the old one, to be collected there at a far higher cost; held as bytes outside the
// heap, a batch is one object, whatever it holds. The insert sends the bytes as an OP_MSG document sequence, the
// form the driver's own insertMany gives documents it has encoded already.
import { createRequire } from "node:module";
import { BSON, type Document } from "mongodb";

/** The driver's document sequence (its insertMany's form of encoded documents), not in its public API. */
interface DriverDocumentSequence {
  readonly field: string;
}
type MakeDocumentSequence = (field: string, documents: readonly unknown[], serialized: readonly Uint8Array[]) => DriverDocumentSequence;
const { makeDocumentSequence } = createRequire(import.meta.url)("mongodb/lib/cmap/commands.js") as { makeDocumentSequence: MakeDocumentSequence };

const FIRST_CAPACITY = 16 * 1024;
/** What one document may take (the server's limit): a buffer with this much room left fits any. */
const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;

export class EncodedDocuments<T extends Document> {
  private bytes: Buffer;
  private used = 0;
  /** Documents appended. */
  count = 0;

  constructor(capacity = FIRST_CAPACITY) {
    this.bytes = Buffer.allocUnsafeSlow(capacity);
  }

  static of<T extends Document>(documents: readonly T[]): EncodedDocuments<T> {
    const encoded = new EncodedDocuments<T>();
    for (const document of documents) encoded.append(document);
    return encoded;
  }

  append(document: T): void {
    for (;;) {
      try {
        // Encoded straight after the documents before it; a RangeError when it does not fit.
        // The options as a literal: spreading a shared object into them cost more than the encoding's own work.
        const options = { checkKeys: false, ignoreUndefined: false, serializeFunctions: false, index: this.used };
        this.used = BSON.serializeWithBufferAndIndex(document, this.bytes, options) + 1;
        this.count++;
        return;
      } catch (error) {
        if (!(error instanceof RangeError) || this.bytes.length - this.used > MAX_DOCUMENT_BYTES) throw error;
        const grown = Buffer.allocUnsafeSlow(this.bytes.length * 2);
        this.bytes.copy(grown, 0, 0, this.used);
        this.bytes = grown;
      }
    }
  }

  /** Empties it, to be filled again in the bytes it has grown to (held, for the next batch). */
  clear(): void {
    this.used = 0;
    this.count = 0;
  }

  /** The documents, decoded. */
  documents(): T[] {
    const documents: T[] = [];
    for (let offset = 0; offset < this.used; offset += this.bytes.readInt32LE(offset)) {
      documents.push(BSON.deserialize(this.bytes.subarray(offset, offset + this.bytes.readInt32LE(offset))) as T);
    }
    return documents;
  }

  /**
   * The documents as the `field` of write commands (`documents` of an insert), at most `perCommand` in each: an
   * OP_MSG document sequence per command, whose bytes are these (monitored commands show them undecoded).
   */
  sequences(field: string, perCommand: number): DriverDocumentSequence[] {
    const sequences: DriverDocumentSequence[] = [];
    let start = 0;
    let offset = 0;
    let inCommand = 0;
    while (offset < this.used) {
      offset += this.bytes.readInt32LE(offset);
      if (++inCommand === perCommand || offset === this.used) {
        const bytes = this.bytes.subarray(start, offset);
        sequences.push(makeDocumentSequence(field, [bytes], [bytes]));
        start = offset;
        inCommand = 0;
      }
    }
    return sequences;
  }
}
