// The load generator of bench/withdrawals.bench.ts, in a process of its own: closed-loop HTTP/1.1 keep-alive
// load on the bare insert route or on POST /v1/users/{id}/withdrawals (a fresh Idempotency-Key per request,
// the users in turn from `offset`), as the JSON of its first argument says, for `durationMs` or at most
// `maxRequests`; prints the result as one JSON line.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import { runClosedLoop } from "./http-load.ts";

const spec = JSON.parse(process.argv[2]!) as {
  target: "bare" | "withdrawal";
  httpPort: number;
  barePort: number;
  key: string;
  /** A JSON file of the user ids (10,000 of them are too long for one command-line argument). */
  usersFile: string;
  concurrency: number;
  durationMs: number;
  /** The index of the first request's user: a run goes on where the one before stopped. */
  offset: number;
  maxRequests?: number;
};
const users = JSON.parse(readFileSync(spec.usersFile, "utf8")) as string[];
const agent = new http.Agent({ keepAlive: true, maxSockets: spec.concurrency });
const body = JSON.stringify({ amount_usd: 1 });

function post(port: number, path: string, headers: Record<string, string>, payload: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        agent,
        headers: { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
      },
      (response) => {
        response.resume();
        response.once("end", () => resolve(response.statusCode ?? 0));
      },
    );
    request.once("error", reject);
    request.end(payload);
  });
}

const user = (i: number) => users[(spec.offset + i) % users.length]!;
const result = await runClosedLoop(
  async (i) =>
    spec.target === "bare"
      ? (await post(spec.barePort, "/bare", {}, JSON.stringify({ user_id: user(i), amount_usd: 1 }))) === 201
      : (await post(
          spec.httpPort,
          `/v1/users/${user(i)}/withdrawals`,
          { authorization: `Bearer ${spec.key}`, "idempotency-key": randomUUID() },
          body,
        )) === 201,
  spec.concurrency,
  spec.durationMs,
  spec.maxRequests,
);
agent.destroy();
process.stdout.write(`${JSON.stringify(result)}\n`);
