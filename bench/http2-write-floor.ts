// The floor under a stream's messages: what Node's HTTP/2 costs a server to write one small message to each of 100
// streams of one connection, with nothing else on the path (no method, no interceptors, no encoding: the same bytes
// written to every stream, as the direct gRPC path writes a shared frame). Its reader is a process of its own that
// opens the streams and reads every byte. Run by bench/event-stream.bench.ts after its rounds, in a process of its own;
// prints one JSON line: the server process's CPU µs per message and stream, per round, each round one write a stream
// per event and one turn of the event loop between events (a stream's message in the one-event-per-message rounds),
// until the reader has read them all.
import { fork } from "node:child_process";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";

const STREAMS = 100;
const EVENTS = 3000;
const ROUNDS = 5;
/** About a one-event message of the bench's events, framed. */
const FRAME = Buffer.alloc(260, 7);

if (process.argv[2] === "reader") {
  const session = http2.connect(process.argv[3]!);
  let received = 0;
  for (let i = 0; i < STREAMS; i++) {
    const stream = session.request({ ":path": "/" });
    stream.on("data", (chunk: Buffer) => {
      received += chunk.length;
    });
    stream.on("error", () => {});
  }
  session.on("error", () => {});
  // Asked, it answers the bytes it has read so far.
  process.on("message", () => process.send!(received));
} else {
  const streams: http2.ServerHttp2Stream[] = [];
  const server = http2.createServer();
  const opened = new Promise<void>((resolve) =>
    server.on("stream", (stream) => {
      stream.respond({ ":status": 200 });
      stream.on("error", () => {});
      streams.push(stream);
      if (streams.length === STREAMS) resolve();
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const reader = fork(new URL(import.meta.url).pathname, ["reader", `http://127.0.0.1:${(server.address() as AddressInfo).port}`]);
  await opened;
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  const receivedByReader = () =>
    new Promise<number>((resolve) => {
      reader.once("message", (bytes) => resolve(bytes as number));
      reader.send("received?");
    });
  let written = 0;
  const rounds: number[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    const before = process.cpuUsage();
    for (let event = 0; event < EVENTS; event++) {
      for (const stream of streams) stream.write(FRAME);
      await turn();
    }
    // Until the reader has read every byte: the sending is the writes' cost too.
    written += EVENTS * STREAMS * FRAME.length;
    while ((await receivedByReader()) < written) await new Promise((resolve) => setTimeout(resolve, 5));
    const used = process.cpuUsage(before);
    // The first round warms up, unreported.
    if (round > 0) rounds.push(Number(((used.user + used.system) / (EVENTS * STREAMS)).toFixed(3)));
  }
  console.log(JSON.stringify({ usPerMessage: rounds }));
  reader.kill();
  process.exit(0);
}
