// Requests Node cannot even parse as HTTP (headers too large, malformed request lines) never reach Fastify's
// handlers; they are answered here, on the socket, in the same envelope and with the same headers.
import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import { describeError, svcError } from "../domain/errors.ts";
import { newRequestId } from "../domain/ids.ts";
import type { RequestGate } from "../access/request-gate.ts";
import type { RateLimitStatus } from "../access/rate-limiter.ts";
import { errorEnvelope } from "../pipeline/error-envelope.ts";
import { identityHeaders, rateLimitHeaders } from "../pipeline/response-headers.ts";

function errorFor(code: string | undefined) {
  if (code === "HPE_HEADER_OVERFLOW") return svcError("payload_too_large", "The request headers exceed the maximum accepted size.");
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") return svcError("invalid_json", "The request was not received in time.");
  return svcError("invalid_json", "The request could not be read as HTTP.");
}

export function clientErrorResponder(gate: RequestGate) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    // A reset connection has nobody to answer.
    if (error.code === "ECONNRESET" || socket.destroyed) return;
    const described = describeError(errorFor(error.code));
    const requestId = newRequestId();
    const answer = (rateLimit: RateLimitStatus) => {
      if (socket.destroyed) return;
      const body = JSON.stringify(errorEnvelope(described, requestId));
      const status = described.definition.status;
      const headers = {
        "Content-Type": "application/json; charset=utf-8",
        "Content-Length": String(Buffer.byteLength(body)),
        Connection: "close",
        ...identityHeaders(requestId),
        ...rateLimitHeaders(rateLimit),
      };
      const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join("");
      socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head}\r\n${body}`);
    };
    gate.countAnonymous(socket.remoteAddress ?? "unknown").then(answer, () => answer(gate.uncounted()));
  };
}
