// The clients of bench/event-stream.bench.ts, in a process of their own: STREAMS StreamEvents streams over one
// HTTP/2 connection (gRPC) to the address given, each recording when every event arrived (milliseconds after the
// event's creation). Prints "ready" once every stream is caught up; on a line "report" on standard input, prints one
// JSON line ({ counts, delays }) with what arrived since the last report and starts over; on "close", ends.
import { createInterface } from "node:readline";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { EventsService, type StreamEventsResponse } from "../gen/svc/v1/events_pb.ts";

const [baseUrl, count] = [process.argv[2]!, Number(process.argv[3])];
const client = createClient(EventsService, createGrpcTransport({ baseUrl }));
const abort = new AbortController();
const arrivals: Map<string, number>[] = [];
const ready: Promise<void>[] = [];
for (let i = 0; i < count; i++) {
  const received = new Map<string, number>();
  arrivals.push(received);
  ready.push(
    new Promise<void>((resolve, reject) => {
      void (async () => {
        try {
          for await (const message of client.streamEvents({}, { signal: abort.signal }) as AsyncIterable<StreamEventsResponse>) {
            if (message.caughtUp) resolve();
            else received.set(message.event!.id, Date.now() - timestampMs(message.event!.createdAt!));
          }
        } catch (error) {
          if (!abort.signal.aborted) reject(error);
        }
      })();
    }),
  );
}
await Promise.all(ready);
process.stdout.write("ready\n");
createInterface({ input: process.stdin }).on("line", (line) => {
  if (line === "report") {
    const report = { counts: arrivals.map((a) => [...a.keys()]), delays: arrivals.flatMap((a) => [...a.values()]) };
    for (const a of arrivals) a.clear();
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } else if (line === "close") {
    abort.abort();
    process.exit(0);
  }
});
