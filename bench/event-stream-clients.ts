// The clients of bench/event-stream.bench.ts, in a process of their own: STREAMS StreamEvents streams over one
// HTTP/2 connection to the address given, with the API key given, each a gRPC call (the generated request, its
// messages read from the wire), doing what a client of the stream must and no more: check that every event reaches
// it once and in the same order as every other stream, and time each arrival (milliseconds after the event's
// creation). It is a load generator on the service's own cores, so it reads of each message only what the check
// needs: an event's id and, the first time any stream receives the event, its creation time; the rest of the bytes
// (`data_json`, the Struct) is skipped by its length, not decoded. Prints "ready" once every stream is caught up.
// Commands on standard input, each answered with one JSON line:
// - "fewest": the number of events the stream that received the fewest has received;
// - "check <JSON array of event ids>": how many of them every stream received (in order, once), the arrival times'
//   p50, p99 and max over every stream, and the first fault (an event out of order, repeated or unknown); then
//   forgets what arrived, for the next round;
// - "close": ends.
// Answers are small, so asking costs the processes next to nothing while the streams run.
import http2 from "node:http2";
import { createInterface } from "node:readline";
import { create, toBinary } from "@bufbuild/protobuf";
import { StreamEventsRequestSchema } from "../gen/svc/v1/events_pb.ts";

// "struct": the streams also carry the deprecated Struct (as a client built before `data_json`); "json": not;
// "batched": not, and a message carries every event waiting for its stream, up to 100 (`max_events_per_message`).
const [baseUrl, count, data, apiKey] = [process.argv[2]!, Number(process.argv[3]), process.argv[4], process.argv[5]!];
/** HTTP/2's initial window of a stream, which the clients keep. */
const STREAM_WINDOW_BYTES = 65_535;
/** Arrival times are counted by millisecond up to this; a later one counts here (and is the max). */
const MAX_DELAY_MS = 60_000;

/**
 * What arrived, kept once for every stream: the events in the order the first stream to reach each position received
 * them (each stream must then receive the same sequence), their ids' bytes to compare a stream's next event with,
 * and their creation times. A stream's position is how many of them it has received; a stream that receives anything
 * else at its position (an event out of order, repeated, or missing before it) is faulty and stops counting.
 */
let ids: string[] = [];
let idBytes: Buffer[] = [];
let createdMs: number[] = [];
let indexOf = new Map<string, number>();
const position = new Array<number>(count).fill(0);
let faults: string[] = [];
const faulty = new Uint8Array(count);
/** Arrivals by milliseconds after creation, every stream together. */
const delays = new Uint32Array(MAX_DELAY_MS + 1);

// Protobuf's wire format, read in place: varints (up to 2^53, as a Timestamp's seconds) and lengths.
let at = 0;
function varint(bytes: Buffer): number {
  let value = 0;
  let scale = 1;
  for (;;) {
    const byte = bytes[at++]!;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return value;
    scale *= 128;
  }
}
function skip(bytes: Buffer, wireType: number): void {
  if (wireType === 0) varint(bytes);
  else if (wireType === 1) at += 8;
  else if (wireType === 2) {
    const length = varint(bytes);
    at += length;
  } else if (wireType === 5) at += 4;
  else throw new Error(`wire type ${wireType} in a stream's message`);
}

/** Milliseconds since the epoch of a google.protobuf.Timestamp in bytes[start, end). */
function timestampAt(bytes: Buffer, start: number, end: number): number {
  let seconds = 0;
  let nanos = 0;
  at = start;
  while (at < end) {
    const tag = varint(bytes);
    if (tag === 0x08) seconds = varint(bytes);
    else if (tag === 0x10) nanos = varint(bytes);
    else skip(bytes, tag & 7);
  }
  return seconds * 1000 + Math.floor(nanos / 1e6);
}

/** An Event (bytes[start, end)) received by stream `i` at `now`. */
function eventArrived(i: number, bytes: Buffer, start: number, end: number, now: number): void {
  let idStart = -1;
  let idEnd = -1;
  let timeStart = -1;
  let timeEnd = -1;
  at = start;
  while (at < end) {
    const tag = varint(bytes);
    if (tag === 0x0a || tag === 0x1a) {
      const length = varint(bytes);
      if (tag === 0x0a) [idStart, idEnd] = [at, at + length];
      else [timeStart, timeEnd] = [at, at + length];
      at += length;
    } else {
      skip(bytes, tag & 7);
    }
  }
  if (faulty[i] === 1) return;
  const p = position[i]!;
  if (p < ids.length) {
    const expected = idBytes[p]!;
    if (expected.length === idEnd - idStart && expected.compare(bytes, idStart, idEnd) === 0) {
      position[i] = p + 1;
      delays[Math.min(MAX_DELAY_MS, Math.max(0, now - createdMs[p]!))]! += 1;
      return;
    }
    fault(i, `stream ${i} received ${bytes.toString("latin1", idStart, idEnd)} where the others received ${ids[p]}`);
    return;
  }
  // The first stream to reach this position: the event's id and creation time are read once, for every stream.
  const id = bytes.toString("latin1", idStart, idEnd);
  if (indexOf.has(id)) {
    fault(i, `stream ${i} received ${id} again`);
    return;
  }
  if (timeStart < 0) throw new Error(`event ${id} without created_at`);
  const created = timestampAt(bytes, timeStart, timeEnd);
  indexOf.set(id, ids.length);
  ids.push(id);
  idBytes.push(Buffer.from(bytes.subarray(idStart, idEnd)));
  createdMs.push(created);
  position[i] = p + 1;
  delays[Math.min(MAX_DELAY_MS, Math.max(0, now - created))]! += 1;
}

function fault(i: number, what: string): void {
  faulty[i] = 1;
  faults.push(what);
}

/** A StreamEventsResponse (bytes[start, end)) of stream `i`: its `event` or `events`; true if it is `caught_up`. */
function messageArrived(i: number, bytes: Buffer, start: number, end: number, now: number): boolean {
  let caughtUp = false;
  at = start;
  while (at < end) {
    const tag = varint(bytes);
    if (tag === 0x0a || tag === 0x22) {
      // `event` (1) or one of `events` (4)
      const length = varint(bytes);
      const next = at + length;
      eventArrived(i, bytes, at, next, now);
      at = next;
    } else if (tag === 0x18) {
      caughtUp = varint(bytes) !== 0;
    } else {
      skip(bytes, tag & 7);
    }
  }
  return caughtUp;
}

const request = toBinary(
  StreamEventsRequestSchema,
  create(StreamEventsRequestSchema, { excludeStructData: data !== "struct", maxEventsPerMessage: data === "batched" ? 100 : 0 }),
);
/** gRPC's length-prefixed message: not compressed, its length, its bytes. */
const requestFrame = Buffer.alloc(5 + request.length);
requestFrame.writeUInt32BE(request.length, 1);
requestFrame.set(request, 5);

const session = http2.connect(baseUrl);
await new Promise<void>((resolve, reject) => session.once("connect", () => resolve()).once("error", reject));
/**
 * The connection's receive window as large as its streams' together. Node's default for the whole connection is
 * 64 KiB, one stream's own window: 100 busy streams on one connection would then take turns in 64 KiB per round trip
 * (a few events each per turn of the service's event loop), which no client multiplexing streams keeps; gRPC's own
 * clients grow theirs by bandwidth probing. Each stream keeps its 64 KiB window, its backpressure.
 */
session.setLocalWindowSize(count * STREAM_WINDOW_BYTES);
let closing = false;

/** Stream `i`: resolves once it is caught up; fails on a gRPC error, an unexpected end or a compressed message. */
function openStream(i: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    // Before "ready" a failure ends the process (the bench sees no "ready"); after it, the stream stops counting,
    // which the round's check reports, and the reason is printed here.
    const fail = (error: Error) => {
      if (closing) return;
      console.error("stream clients:", error.message);
      reject(error);
    };
    const stream = session.request({
      ":method": "POST",
      ":path": "/svc.v1.EventsService/StreamEvents",
      "content-type": "application/grpc+proto",
      te: "trailers",
      authorization: `Bearer ${apiKey}`,
    });
    stream.end(requestFrame);
    stream.on("response", (headers) => {
      if (headers[":status"] !== 200) fail(new Error(`stream ${i}: HTTP ${headers[":status"]}`));
      else if (headers["grpc-status"] !== undefined) fail(new Error(`stream ${i}: grpc-status ${headers["grpc-status"]} ${headers["grpc-message"]}`));
    });
    stream.on("trailers", (trailers) => fail(new Error(`stream ${i} ended: grpc-status ${trailers["grpc-status"]} ${trailers["grpc-message"]}`)));
    stream.on("error", fail);
    stream.on("close", () => fail(new Error(`stream ${i} closed`)));
    /** Bytes of a message not yet whole. */
    let rest: Buffer | null = null;
    stream.on("data", (chunk: Buffer) => {
      // A message's events arrive together.
      const now = Date.now();
      const bytes = rest === null ? chunk : Buffer.concat([rest, chunk]);
      let offset = 0;
      while (bytes.length - offset >= 5) {
        const length = bytes.readUInt32BE(offset + 1);
        if (bytes.length - offset - 5 < length) break;
        if (bytes[offset] !== 0) return fail(new Error(`stream ${i}: a compressed message`));
        if (messageArrived(i, bytes, offset + 5, offset + 5 + length, now)) resolve();
        offset += 5 + length;
      }
      rest = offset === bytes.length ? null : bytes.subarray(offset);
    });
  });
}

function percentile(p: number, total: number): number {
  let rank = Math.min(total - 1, Math.floor((p / 100) * total));
  for (let ms = 0; ms <= MAX_DELAY_MS; ms++) {
    rank -= delays[ms]!;
    if (rank < 0) return ms;
  }
  return Number.NaN;
}

function check(published: string[]) {
  const every = faulty.includes(1) ? 0 : Math.min(...position);
  const complete = published.filter((id) => (indexOf.get(id) ?? Number.POSITIVE_INFINITY) < every).length;
  const total = delays.reduce((sum, n) => sum + n, 0);
  let max = Number.NaN;
  for (let ms = MAX_DELAY_MS; ms >= 0; ms--) {
    if (delays[ms]! > 0) {
      max = ms;
      break;
    }
  }
  const result = { complete, p50: percentile(50, total), p99: percentile(99, total), max, fault: faults[0] ?? null };
  [ids, idBytes, createdMs, indexOf, faults] = [[], [], [], new Map(), []];
  position.fill(0);
  faulty.fill(0);
  delays.fill(0);
  return result;
}

await Promise.all(Array.from({ length: count }, (_, i) => openStream(i)));
process.stdout.write("ready\n");
createInterface({ input: process.stdin })
  .on("line", (line) => {
    const [command, argument] = [line.split(" ", 1)[0], line.slice(line.indexOf(" ") + 1)];
    if (command === "fewest") {
      process.stdout.write(`${JSON.stringify(Math.min(...position))}\n`);
    } else if (command === "check") {
      process.stdout.write(`${JSON.stringify(check(JSON.parse(argument) as string[]))}\n`);
    } else if (command === "close") {
      closing = true;
      session.destroy();
      process.exit(0);
    }
  })
  .on("close", () => {
    // Standard input ended without "close": the bench is gone (killed or crashed); its streams go with it.
    process.exit(0);
  });
