// A closed-loop HTTP load generator: `concurrency` keep-alive connections each send the next request as soon
// as the previous answer is read, for `durationMs`. Latency is measured per request.
import http from "node:http";

export interface LoadOptions {
  url: string;
  method: string;
  /** Headers per request (a function may vary them, e.g. a fresh Idempotency-Key). */
  headers: (i: number) => Record<string, string>;
  body?: (i: number) => string | undefined;
  concurrency: number;
  durationMs: number;
  /** Statuses counted as success; others are counted as errors. */
  okStatuses: number[];
}

export interface LoadResult {
  requests: number;
  errors: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function send(agent: http.Agent, url: URL, method: string, headers: Record<string, string>, body: string | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method, agent, headers: body === undefined ? headers : { ...headers, "content-length": Buffer.byteLength(body) } },
      (response) => {
        response.resume();
        response.once("end", () => resolve(response.statusCode ?? 0));
      },
    );
    request.once("error", reject);
    request.end(body);
  });
}

/**
 * Runs `call` from `concurrency` loops, each starting its next call when the previous one is answered, for
 * `durationMs`. `call` answers whether it succeeded; a throw counts as an error. Any transport can be loaded so.
 */
/** Closed-loop load: `concurrency` loops calling `call(0)`, `call(1)`, ... until `durationMs` or `maxRequests` calls. */
export async function runClosedLoop(
  call: (i: number) => Promise<boolean>,
  concurrency: number,
  durationMs: number,
  maxRequests = Number.POSITIVE_INFINITY,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  let counter = 0;
  const started = performance.now();
  const deadline = started + durationMs;
  const loop = async () => {
    while (performance.now() < deadline && counter < maxRequests) {
      const i = counter++;
      const t0 = performance.now();
      try {
        if (!(await call(i))) errors++;
      } catch {
        errors++;
      }
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  const elapsed = performance.now() - started;
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    errors,
    perSecond: (latencies.length / elapsed) * 1000,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  };
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const url = new URL(options.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
  try {
    return await runClosedLoop(
      async (i) => options.okStatuses.includes(await send(agent, url, options.method, options.headers(i), options.body?.(i))),
      options.concurrency,
      options.durationMs,
    );
  } finally {
    agent.destroy();
  }
}

export function formatLoad(name: string, r: LoadResult): string {
  return `| ${name} | ${r.perSecond.toFixed(0)} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} | ${r.requests} | ${r.errors} |`;
}

export const LOAD_TABLE_HEADER = "| run | requests/s | p50 ms | p99 ms | requests | errors |\n|---|---|---|---|---|---|";
