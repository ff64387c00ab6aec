// The load generator of bench/request-log.bench.ts, in a process of its own: the rest-read load
// (GET /v1/users/{id}) or the users-create load (POST /v1/users, a fresh Idempotency-Key and phone number per
// request, numbered from `phoneOffset`), closed-loop over keep-alive connections, as the JSON of its first
// argument says; prints the result as one JSON line.
import { randomUUID } from "node:crypto";
import { runLoad } from "./http-load.ts";

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
const base = `http://127.0.0.1:${spec.httpPort}`;
const authorization = `Bearer ${spec.key}`;
const result =
  spec.load === "rest-read"
    ? await runLoad({
        url: `${base}/v1/users/${spec.userId}`,
        method: "GET",
        headers: () => ({ authorization }),
        concurrency: spec.concurrency,
        durationMs: spec.durationMs,
        okStatuses: [200],
      })
    : await runLoad({
        url: `${base}/v1/users`,
        method: "POST",
        headers: () => ({ "content-type": "application/json", authorization, "idempotency-key": randomUUID() }),
        body: (i) => JSON.stringify({ phone: `+1${String(3_000_000_000 + spec.phoneOffset + i)}` }),
        concurrency: spec.concurrency,
        durationMs: spec.durationMs,
        okStatuses: [201],
      });
process.stdout.write(`${JSON.stringify(result)}\n`);
