// The load generator of bench/request-log.bench.ts, in a process of its own: the rest-read load
// (GET /v1/users/{id}) or the users-create load (POST /v1/users, a fresh Idempotency-Key and phone number per
// request, numbered from `phoneOffset`), closed-loop over keep-alive connections (bench/request-log-connection.ts),
// as the JSON of its first argument says; prints the result as one JSON line, with the CPU this process spent
// loading (`loaderMicros`).
import { randomUUID } from "node:crypto";
import { runClosedLoop } from "./http-load.ts";
import { RawHttpConnection } from "./request-log-connection.ts";

const spec = JSON.parse(process.argv[2]!) as {
  load: "rest-read" | "users-create";
  httpPort: number;
  key: string;
  userId: string;
  concurrency: number;
  durationMs: number;
  /** The first phone number's offset: each run's users are new. */
  phoneOffset: number;
};
const head = `Host: 127.0.0.1:${spec.httpPort}\r\nAuthorization: Bearer ${spec.key}\r\n`;
const read = `GET /v1/users/${spec.userId} HTTP/1.1\r\n${head}\r\n`;
function create(i: number): string {
  const body = JSON.stringify({ phone: `+1${String(3_000_000_000 + spec.phoneOffset + i)}` });
  return `POST /v1/users HTTP/1.1\r\n${head}Content-Type: application/json\r\nIdempotency-Key: ${randomUUID()}\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
}
const [request, okStatus] = spec.load === "rest-read" ? [() => read, 200] : [create, 201];

// One connection per loop: a loop takes an idle one for each call and gives it back once answered.
const idle = await Promise.all(Array.from({ length: spec.concurrency }, () => RawHttpConnection.open(spec.httpPort)));
const all = [...idle];
const cpuBefore = process.cpuUsage();
const result = await runClosedLoop(
  async (i) => {
    const connection = idle.pop()!;
    try {
      return (await connection.send(request(i))) === okStatus;
    } finally {
      idle.push(connection);
    }
  },
  spec.concurrency,
  spec.durationMs,
);
const cpu = process.cpuUsage(cpuBefore);
for (const connection of all) connection.close();
process.stdout.write(`${JSON.stringify({ ...result, loaderMicros: cpu.user + cpu.system })}\n`);
