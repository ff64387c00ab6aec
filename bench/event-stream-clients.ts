// The clients of bench/event-stream.bench.ts, in a process of their own: STREAMS StreamEvents streams over one
// HTTP/2 connection (gRPC) to the address given, each doing what a client of the stream does and no more: decode
// every message, remember its event, time its arrival (milliseconds after the event's creation). Prints "ready"
// once every stream is caught up. Commands on standard input, each answered with one JSON line:
// - "fewest": the number of events the stream that received the fewest has received;
// - "check <JSON array of event ids>": how many of them every stream received, and the arrival times' p50, p99 and
//   max over every stream; then forgets what arrived, for the next round;
// - "close": ends.
// Answers are small, so asking costs the processes next to nothing while the streams run.
import { createInterface } from "node:readline";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { EventsService, type StreamEventsResponse } from "../gen/svc/v1/events_pb.ts";

// "struct": the streams also carry the deprecated Struct (as a client built before `data_json`); "json": not;
// "batched": not, and a message carries every event waiting for its stream, up to 100 (`max_events_per_message`).
const [baseUrl, count, data] = [process.argv[2]!, Number(process.argv[3]), process.argv[4]];
/** HTTP/2's initial window of a stream, which the clients keep. */
const STREAM_WINDOW_BYTES = 65_535;
/**
 * The connection's receive window as large as its streams' together. Node's default for the whole connection is
 * 64 KiB, one stream's own window: 100 busy streams on one connection would then take turns in 64 KiB per round trip
 * (a few events each per turn of the service's event loop), which no client multiplexing streams keeps; gRPC's own
 * clients grow theirs by bandwidth probing. Each stream keeps its 64 KiB window, its backpressure.
 */
class WideWindowSessions extends Http2SessionManager {
  private widened = new WeakSet<object>();
  override async request(...args: Parameters<Http2SessionManager["request"]>) {
    const stream = await super.request(...args);
    const session = stream.session;
    if (session && !this.widened.has(session)) {
      this.widened.add(session);
      session.setLocalWindowSize(count * STREAM_WINDOW_BYTES);
    }
    return stream;
  }
}
const client = createClient(EventsService, createGrpcTransport({ baseUrl, sessionManager: new WideWindowSessions(baseUrl) }));
const abort = new AbortController();
/**
 * What arrived, kept once for every stream rather than per stream (100 maps holding each event's id, decoded anew
 * by every stream, were garbage the collector copied and marked all round long, a fifth of this process's CPU):
 * by event id, which streams received it (1 at the stream's index); each stream's count of events; every arrival's
 * time after the event's creation (ms), all streams together.
 */
const seen = new Map<string, Uint8Array>();
const received = new Array<number>(count).fill(0);
let delays: number[] = [];
const ready: Promise<void>[] = [];
for (let i = 0; i < count; i++) {
  ready.push(
    new Promise<void>((resolve, reject) => {
      void (async () => {
        try {
          for await (const message of client.streamEvents(
            { excludeStructData: data !== "struct", maxEventsPerMessage: data === "batched" ? 100 : 0 },
            { signal: abort.signal },
          ) as AsyncIterable<StreamEventsResponse>) {
            if (message.caughtUp) resolve();
            // A message's events arrive together.
            const now = Date.now();
            for (const event of message.event ? [message.event] : message.events) {
              let streams = seen.get(event.id);
              if (streams === undefined) seen.set(event.id, (streams = new Uint8Array(count)));
              // An event a stream received twice counts once, at its first arrival.
              if (streams[i] === 1) continue;
              streams[i] = 1;
              received[i]! += 1;
              delays.push(now - timestampMs(event.createdAt!));
            }
          }
        } catch (error) {
          if (!abort.signal.aborted) reject(error);
        }
      })();
    }),
  );
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

function check(ids: string[]) {
  const complete = ids.filter((id) => seen.get(id)?.every((flag) => flag === 1) === true).length;
  const sorted = Float64Array.from(delays).sort();
  seen.clear();
  received.fill(0);
  delays = [];
  return { complete, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? Number.NaN };
}

await Promise.all(ready);
process.stdout.write("ready\n");
createInterface({ input: process.stdin })
  .on("line", (line) => {
    const [command, argument] = [line.split(" ", 1)[0], line.slice(line.indexOf(" ") + 1)];
    if (command === "fewest") {
      process.stdout.write(`${JSON.stringify(Math.min(...received))}\n`);
    } else if (command === "check") {
      process.stdout.write(`${JSON.stringify(check(JSON.parse(argument) as string[]))}\n`);
    } else if (command === "close") {
      abort.abort();
      process.exit(0);
    }
  })
  .on("close", () => {
    // Standard input ended without "close": the bench is gone (killed or crashed); its streams go with it.
    process.exit(0);
  });
