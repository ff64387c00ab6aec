// Change stream resume tokens: `{ _data: "<hex>" }`, opaque to clients as mongod's are. The hex holds the event's
// cluster time and its place among the events of that oplog entry (a drop is followed by its invalidate, at the
// same time); a high-water-mark token (postBatchResumeToken with no event) sorts after every event of its time.
import { Timestamp, type Document } from "bson";
import { commandError, ErrorCodes } from "../bson/errors.ts";

/** Place of an event within one oplog entry. */
export const TokenKind = { Event: 0, Invalidate: 1, HighWaterMark: 2 } as const;
export type TokenKind = (typeof TokenKind)[keyof typeof TokenKind];

export interface StreamPosition {
  /** Oplog seq of the entry, 0 before the first one. */
  seq: number;
  kind: TokenKind;
  ts: Timestamp;
}

const hex8 = (n: number) => (n >>> 0).toString(16).toUpperCase().padStart(8, "0");

export function encodeToken(ts: Timestamp, kind: TokenKind): Document {
  // 0x82 is the type byte mongod's keystring encoding gives a Timestamp, so tokens look like mongod's.
  return { _data: `82${hex8(ts.high)}${hex8(ts.low)}0${kind}` };
}

export function decodeToken(token: unknown, field: string): { ts: Timestamp; kind: TokenKind } {
  const data = (token as { _data?: unknown } | null)?._data;
  if (typeof data !== "string" || !/^82[0-9A-Fa-f]{16}0[0-2]$/.test(data) || Object.keys(token as Document).length !== 1) {
    throw commandError(
      ErrorCodes.FailedToParse,
      `Bad resume token: _data of missing or of wrong type. Expected string, got ${JSON.stringify(token)} in '${field}'`,
    );
  }
  const t = parseInt(data.slice(2, 10), 16);
  const i = parseInt(data.slice(10, 18), 16);
  return { ts: new Timestamp({ t, i }), kind: Number(data.slice(19)) as TokenKind };
}
