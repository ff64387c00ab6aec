// The same authenticated read over gRPC (`svc.v1.UsersService/GetUser` on GRPC_PORT) and over REST
// (`GET /v1/users/{id}` on PORT), with the load generated OUTSIDE the service's process: the service runs in a
// child process (bench/read-service.ts: embedded database on a worker thread, as `npm start` runs it), and
// h2load (Debian's nghttp2-client, a C program) loads it, over HTTP/2 with a pre-encoded request for gRPC and
// over HTTP/1.1 for REST, 32 requests in flight each. Three rounds, the targets in turn; beside throughput,
// the service process's CPU time per request (utime + stime of /proc/<pid>/stat). Goal: gRPC
// throughput at least REST's. Writes bench/results/grpc-vs-rest.md.
import { execFileSync, execSync, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { create, toBinary } from "@bufbuild/protobuf";
import { GetUserRequestSchema } from "../gen/svc/v1/users_pb.ts";
import { codeRevision, machineDescription } from "./machine.ts";
import { cpuSecondsOf } from "./process-cpu.ts";
import { writeResults } from "./results-file.ts";
import { SERVICE_NODE_OPTIONS } from "./service-node-options.ts";

const CONCURRENCY = 32;
const DURATION_S = Number(process.env.BENCH_DURATION_MS ?? 8000) / 1000;
const WARM_UP_S = 3;
const ROUNDS = 3;
const root = fileURLToPath(new URL("..", import.meta.url));

/** h2load, installed from Debian's nghttp2-client when missing (the machines run as root). */
function ensureH2load(): string {
  const find = () => {
    try {
      return execSync("command -v h2load", { shell: "/bin/sh" }).toString().trim();
    } catch {
      return "";
    }
  };
  let path = find();
  if (!path) {
    console.error("h2load missing: installing Debian's nghttp2-client");
    execSync("apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nghttp2-client", { stdio: "inherit", shell: "/bin/sh" });
    path = find();
    if (!path) throw new Error("h2load is not installed and could not be (apt-get install nghttp2-client)");
  }
  return path;
}
const h2load = ensureH2load();
const h2loadVersion = execFileSync(h2load, ["--version"]).toString().trim();

// The service, in its own process.
const service = spawn(process.execPath, [...SERVICE_NODE_OPTIONS, "--import", "tsx", join(root, "bench/read-service.ts")], {
  cwd: root,
  stdio: ["pipe", "pipe", "inherit"],
});
const ready = await new Promise<{ pid: number; httpPort: number; grpcPort: number; key: string; userId: string }>((resolve, reject) => {
  service.once("exit", (code) => reject(new Error(`the service exited (${code}) before it was ready`)));
  createInterface({ input: service.stdout! }).once("line", (line) => resolve(JSON.parse(line)));
});
const { pid, httpPort, grpcPort, key, userId } = ready;

// The gRPC request, enveloped once: flag 0, length, the GetUserRequest message.
const work = mkdtempSync(join(tmpdir(), "svc-bench-"));
const message = toBinary(GetUserRequestSchema, create(GetUserRequestSchema, { id: userId }));
const frame = Buffer.alloc(5 + message.byteLength);
frame.writeUInt32BE(message.byteLength, 1);
frame.set(message, 5);
const framePath = join(work, "get-user.grpc");
writeFileSync(framePath, frame);

type Target = "rest" | "grpc";
const TARGETS: Target[] = ["rest", "grpc"];
const LABELS: Record<Target, string> = {
  rest: `REST GET /v1/users/{id}, HTTP/1.1, ${CONCURRENCY} connections`,
  grpc: `gRPC GetUser, HTTP/2, 1 connection x ${CONCURRENCY} streams`,
};

function args(target: Target, seconds: number): string[] {
  const common = ["-D", String(seconds), "-H", `authorization: Bearer ${key}`];
  if (target === "rest") return ["--h1", "-c", String(CONCURRENCY), "-m", "1", ...common, `http://127.0.0.1:${httpPort}/v1/users/${userId}`];
  return [
    "-c",
    "1",
    "-m",
    String(CONCURRENCY),
    ...common,
    "-d",
    framePath,
    "-H",
    "content-type: application/grpc",
    "-H",
    "te: trailers",
    `http://127.0.0.1:${grpcPort}/svc.v1.UsersService/GetUser`,
  ];
}

/** The service process's CPU seconds so far (all its threads: the service, the embedded database, GC). */
const cpuSeconds = () => cpuSecondsOf(pid);

/** OK answers of GetUser over gRPC so far, from the service's own metrics (h2load sees only HTTP 200). */
async function grpcCalls(): Promise<{ ok: number; failed: number }> {
  const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
  let ok = 0;
  let failed = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith("svc_rpc_calls_total{") || !line.includes('procedure="svc.v1.UsersService/GetUser"') || !line.includes('protocol="grpc"'))
      continue;
    const value = Number(line.slice(line.lastIndexOf(" ") + 1));
    if (line.includes('code="ok"')) ok += value;
    else failed += value;
  }
  return { ok, failed };
}

interface Run {
  perSecond: number;
  requests: number;
  cpuMicrosPerRequest: number;
  cpuCores: number;
  meanMs: number;
}

async function run(target: Target, seconds: number): Promise<Run> {
  const callsBefore = target === "grpc" ? await grpcCalls() : undefined;
  const cpuBefore = cpuSeconds();
  const started = performance.now();
  const output = execFileSync(h2load, args(target, seconds), { maxBuffer: 16 * 1024 * 1024 }).toString();
  const elapsed = (performance.now() - started) / 1000;
  const cpu = cpuSeconds() - cpuBefore;
  const requests = /requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(output);
  const statuses = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(output);
  const finished = /finished in ([\d.]+)s, ([\d.]+) req\/s/.exec(output);
  const mean = /time for request:\s+\S+\s+\S+\s+(\S+)/.exec(output);
  if (!requests || !statuses || !finished) throw new Error(`unexpected h2load output:\n${output}`);
  const succeeded = Number(requests[1]);
  if (Number(requests[2]) + Number(requests[3]) > 0 || Number(statuses[3]) + Number(statuses[4]) > 0)
    throw new Error(`${LABELS[target]}: failed requests\n${output}`);
  if (callsBefore) {
    // Every 2xx of h2load must be a gRPC OK; the last requests in flight when the time ran out may be answered
    // after h2load stopped counting.
    const after = await grpcCalls();
    const ok = after.ok - callsBefore.ok;
    if (after.failed !== callsBefore.failed || ok < succeeded || ok > succeeded + CONCURRENCY) {
      throw new Error(
        `${LABELS[target]}: h2load counted ${succeeded} answers, the service ${ok} OK and ${after.failed - callsBefore.failed} failed calls`,
      );
    }
  }
  const toMs = (text: string) =>
    text.endsWith("us") ? Number.parseFloat(text) / 1000 : text.endsWith("ms") ? Number.parseFloat(text) : Number.parseFloat(text) * 1000;
  return {
    perSecond: Number(finished[2]),
    requests: succeeded,
    cpuMicrosPerRequest: (cpu / succeeded) * 1e6,
    cpuCores: cpu / elapsed,
    meanMs: mean ? toMs(mean[1]!) : Number.NaN,
  };
}

const loadBefore = loadavg()[0]!;
for (const target of TARGETS) await run(target, WARM_UP_S); // JIT, pools, caches

const results: Record<Target, Run[]> = { rest: [], grpc: [] };
const rows: string[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  for (const target of TARGETS) {
    const result = await run(target, DURATION_S);
    results[target].push(result);
    rows.push(
      `| ${LABELS[target]}, round ${round} | ${result.perSecond.toFixed(0)} | ${result.cpuMicrosPerRequest.toFixed(0)} | ${result.cpuCores.toFixed(2)} | ${result.meanMs.toFixed(2)} | ${result.requests} |`,
    );
    console.error(rows.at(-1));
  }
}
const loadAfter = loadavg()[0]!;
service.stdin!.end();
await new Promise((resolve) => service.once("exit", resolve));

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ratios = (f: (round: number) => number) => Array.from({ length: ROUNDS }, (_, round) => f(round));
const throughputRatios = ratios((r) => results.grpc[r]!.perSecond / results.rest[r]!.perSecond);
const cpuRatios = ratios((r) => results.grpc[r]!.cpuMicrosPerRequest / results.rest[r]!.cpuMicrosPerRequest);
const percent = (x: number) => `${(x * 100).toFixed(0)}%`;
const met = median(throughputRatios) >= 1;

const report = `# The same read over gRPC and REST, load from another process

Code: ${codeRevision()}.

Machine: ${machineDescription()}; shared with other sessions (2 cores, noisy). One-minute load average
${loadBefore.toFixed(1)} when the runs started and ${loadAfter.toFixed(1)} when they ended. Load generator: ${h2loadVersion}.

Method (\`npm run bench grpc-vs-rest\`, bench/grpc-vs-rest.bench.ts):

- The service runs in a process of its own (bench/read-service.ts): the embedded database on a worker thread of
  that process, as \`npm start\` runs it, Svc with request logs at the shipped level (info) written to /dev/null,
  a sandbox key and one user.
- h2load, a C program in another process, keeps ${CONCURRENCY} requests in flight for ${DURATION_S} s per run (after a
  ${WARM_UP_S} s warm-up of each target), three rounds taking the targets in turn:
  - REST: \`GET /v1/users/{id}\` with the key, HTTP/1.1 keep-alive, ${CONCURRENCY} connections;
  - gRPC: \`svc.v1.UsersService/GetUser\` with the same key on GRPC_PORT (h2c), one connection with ${CONCURRENCY}
    concurrent streams (as a gRPC client runs), the request pre-encoded once. Every answer h2load counts is
    checked against the service's own \`svc_rpc_calls_total\` (all OK).
- CPU per request: utime + stime of the service process (/proc/<pid>/stat) over the run, divided by the requests
  answered: the service's transport, checks, method and logs, and the embedded database's thread, which does
  the same work for both. "cores" is that CPU time over the run's wall time.

| run | requests/s | CPU µs per request | cores | mean latency ms | requests |
|---|---|---|---|---|---|
${rows.join("\n")}

| ratio (gRPC / REST) | median of the rounds | each round |
|---|---|---|
| throughput | ${percent(median(throughputRatios))} | ${throughputRatios.map(percent).join(", ")} |
| CPU per request | ${percent(median(cpuRatios))} | ${cpuRatios.map(percent).join(", ")} |

Goal: gRPC throughput at least REST's: ${met ? "met" : "**not met**"}.
`;
writeResults("grpc-vs-rest.md", report);
console.log(report);
