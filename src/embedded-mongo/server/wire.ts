// MongoDB wire protocol framing: parses OP_MSG / OP_QUERY requests and builds OP_MSG / OP_REPLY replies.
import { serialize, type Document } from "bson";
import { decodeDocument } from "../bson/decode.ts";

export const OP_REPLY = 1;
export const OP_QUERY = 2004;
export const OP_COMPRESSED = 2012;
export const OP_MSG = 2013;

export const HEADER_SIZE = 16;
/** mongod's maxMessageSizeBytes: larger frames are refused before being buffered. */
export const MAX_MESSAGE_SIZE = 48_000_000;

export const FLAG_CHECKSUM_PRESENT = 1 << 0;
export const FLAG_MORE_TO_COME = 1 << 1;

export class ProtocolError extends Error {}

export interface MsgRequest {
  kind: "msg";
  requestId: number;
  flags: number;
  command: Document;
}

export interface QueryRequest {
  kind: "query";
  requestId: number;
  fullCollectionName: string;
  command: Document;
}

export type WireRequest = MsgRequest | QueryRequest;

function readCString(buf: Buffer, offset: number, end: number): [string, number] {
  const zero = buf.indexOf(0, offset);
  if (zero < 0 || zero >= end) throw new ProtocolError("unterminated cstring");
  return [buf.toString("utf8", offset, zero), zero + 1];
}

function readDocument(buf: Buffer, offset: number, end: number): [Document, number] {
  if (offset + 5 > end) throw new ProtocolError("truncated BSON document");
  const size = buf.readInt32LE(offset);
  if (size < 5 || offset + size > end) throw new ProtocolError("invalid BSON document size");
  const doc = decodeDocument(buf.subarray(offset, offset + size));
  return [doc, offset + size];
}

/** Parses one complete frame (header included). Throws ProtocolError on anything malformed. */
export function parseFrame(frame: Buffer): WireRequest {
  const requestId = frame.readInt32LE(4);
  const opCode = frame.readInt32LE(12);
  if (opCode === OP_MSG) return parseMsg(frame, requestId);
  if (opCode === OP_QUERY) return parseQuery(frame, requestId);
  throw new ProtocolError(`unsupported opCode ${opCode}`);
}

function parseMsg(frame: Buffer, requestId: number): MsgRequest {
  if (frame.length < HEADER_SIZE + 5) throw new ProtocolError("OP_MSG too short");
  const flags = frame.readUInt32LE(HEADER_SIZE);
  // Bits 0-15 are "required": a flag we do not know must fail the message (per the OP_MSG spec).
  const knownRequired = FLAG_CHECKSUM_PRESENT | FLAG_MORE_TO_COME;
  if ((flags & 0xffff & ~knownRequired) !== 0) throw new ProtocolError(`unknown required OP_MSG flags ${flags}`);
  // The CRC-32C trailer is tolerated, not verified: it only guards against corruption on unreliable links.
  const end = flags & FLAG_CHECKSUM_PRESENT ? frame.length - 4 : frame.length;
  let offset = HEADER_SIZE + 4;
  let command: Document | undefined;
  const sequences: [string, Document[]][] = [];
  while (offset < end) {
    const kind = frame[offset++];
    if (kind === 0) {
      if (command) throw new ProtocolError("OP_MSG has more than one body section");
      [command, offset] = readDocument(frame, offset, end);
    } else if (kind === 1) {
      if (offset + 4 > end) throw new ProtocolError("truncated document sequence");
      const size = frame.readInt32LE(offset);
      const seqEnd = offset + size;
      if (size < 5 || seqEnd > end) throw new ProtocolError("invalid document sequence size");
      let id: string;
      [id, offset] = readCString(frame, offset + 4, seqEnd);
      const docs: Document[] = [];
      while (offset < seqEnd) {
        let doc: Document;
        [doc, offset] = readDocument(frame, offset, seqEnd);
        docs.push(doc);
      }
      sequences.push([id, docs]);
    } else {
      throw new ProtocolError(`unknown OP_MSG section kind ${kind}`);
    }
  }
  if (!command) throw new ProtocolError("OP_MSG without body section");
  // Kind-1 sequences are equivalent to array fields of the command (e.g. insert's `documents`).
  for (const [id, docs] of sequences) command[id] = docs;
  return { kind: "msg", requestId, flags, command };
}

function parseQuery(frame: Buffer, requestId: number): QueryRequest {
  // After the flags: the collection name, numberToSkip and numberToReturn, then the command.
  const [fullCollectionName, afterName] = readCString(frame, HEADER_SIZE + 4, frame.length);
  let [command] = readDocument(frame, afterName + 8, frame.length);
  // Legacy drivers wrap the command as { $query: {...}, $readPreference: ... }.
  if (command.$query && typeof command.$query === "object") command = command.$query as Document;
  return { kind: "query", requestId, fullCollectionName, command };
}

let nextReplyId = 1;

function header(length: number, responseTo: number, opCode: number): Buffer {
  const h = Buffer.allocUnsafe(HEADER_SIZE);
  h.writeInt32LE(length, 0);
  h.writeInt32LE(nextReplyId++ & 0x7fffffff, 4);
  h.writeInt32LE(responseTo, 8);
  h.writeInt32LE(opCode, 12);
  return h;
}

const SERIALIZE_OPTIONS = { ignoreUndefined: false, checkKeys: false };

export function buildMsgReply(responseTo: number, reply: Document): Buffer {
  const body = serialize(reply, SERIALIZE_OPTIONS);
  const length = HEADER_SIZE + 4 + 1 + body.length;
  const out = Buffer.allocUnsafe(length);
  header(length, responseTo, OP_MSG).copy(out, 0);
  out.writeUInt32LE(0, HEADER_SIZE);
  out[HEADER_SIZE + 4] = 0;
  out.set(body, HEADER_SIZE + 5);
  return out;
}

export function buildOpReply(responseTo: number, reply: Document): Buffer {
  const body = serialize(reply, SERIALIZE_OPTIONS);
  const length = HEADER_SIZE + 20 + body.length;
  const out = Buffer.allocUnsafe(length);
  header(length, responseTo, OP_REPLY).copy(out, 0);
  out.writeInt32LE(8, HEADER_SIZE); // responseFlags: AwaitCapable
  out.writeBigInt64LE(0n, HEADER_SIZE + 4); // cursorID
  out.writeInt32LE(0, HEADER_SIZE + 12); // startingFrom
  out.writeInt32LE(1, HEADER_SIZE + 16); // numberReturned
  out.set(body, HEADER_SIZE + 20);
  return out;
}
