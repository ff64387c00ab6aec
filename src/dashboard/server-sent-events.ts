// Writing server-sent events (text/event-stream) to a dashboard response: each event as it comes, a comment line
// every 15 s so that proxies keep an idle stream open, and the end of the response with the end of the events or
// with the browser going away.
import type { FastifyReply } from "fastify";
import type { ServerSentEvent } from "./console-router.ts";

const KEEPALIVE_MS = 15_000;

/** One event in the wire format; data lines cannot hold a line break, so each line of `data` gets its own. */
function serialized(event: ServerSentEvent): string {
  const id = event.id !== undefined ? `id: ${event.id.replace(/[\r\n]/g, "")}\n` : "";
  const data = event.data
    .split(/\r?\n/)
    .map((line) => `data: ${line}\n`)
    .join("");
  return `${id}event: ${event.event}\n${data}\n`;
}

export async function sendServerSentEvents(reply: FastifyReply, events: AsyncIterable<ServerSentEvent>, signal: AbortSignal): Promise<void> {
  reply.hijack();
  const raw = reply.raw;
  // Fastify's onRequest headers (CSP, no-store, ...) are on the reply, not yet on the raw response.
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) raw.setHeader(name, value as string);
  raw.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", "x-accel-buffering": "no" });
  raw.write(": connected\n\n");
  const keepalive = setInterval(() => raw.write(": keepalive\n\n"), KEEPALIVE_MS);
  keepalive.unref();
  try {
    for await (const event of events) {
      if (signal.aborted) break;
      raw.write(serialized(event));
    }
  } finally {
    clearInterval(keepalive);
    raw.end();
  }
}
