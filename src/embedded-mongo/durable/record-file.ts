// Record framing shared by the journal and the snapshot: [u32 payload length][u32 CRC-32 of type + payload]
// [u8 type][payload], little-endian. Reading stops at the first record that is cut short or fails its
// checksum: that is where a crash interrupted the last append.
import { readFileSync } from "node:fs";
import { crc32 } from "node:zlib";

export const RECORD_HEADER = 9;

export function frameRecord(type: number, payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(RECORD_HEADER + payload.length);
  out.writeUInt32LE(payload.length, 0);
  out[8] = type;
  out.set(payload, RECORD_HEADER);
  out.writeUInt32LE(crc32(out.subarray(8)), 4);
  return out;
}

export interface FileRecord {
  type: number;
  payload: Buffer;
}

export interface ReadResult {
  records: FileRecord[];
  /** Bytes of intact records from the start of the file. */
  validBytes: number;
  totalBytes: number;
}

/** Every intact record of `path`, in order, and where the intact part ends. */
export function readRecords(path: string): ReadResult {
  const buf = readFileSync(path);
  const records: FileRecord[] = [];
  let offset = 0;
  while (offset + RECORD_HEADER <= buf.length) {
    const length = buf.readUInt32LE(offset);
    const end = offset + RECORD_HEADER + length;
    if (end > buf.length) break;
    if (crc32(buf.subarray(offset + 8, end)) !== buf.readUInt32LE(offset + 4)) break;
    records.push({ type: buf.readUInt8(offset + 8), payload: buf.subarray(offset + RECORD_HEADER, end) });
    offset = end;
  }
  return { records, validBytes: offset, totalBytes: buf.length };
}
