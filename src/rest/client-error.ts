// Requests Node cannot even parse as HTTP (headers too large, malformed request lines) never reach Fastify's
// handlers; they are answered here, on the socket, in the same envelope and with the same headers.
import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import { svcError } from "../domain/errors.ts";
import { newRequestId } from "../domain/ids.ts";
import type { CallFailure, CallPipeline } from "../pipeline/call-pipeline.ts";
import { errorEnvelope } from "../representations/error-envelope.ts";

function errorFor(code: string | undefined) {
  if (code === "HPE_HEADER_OVERFLOW") return svcError("request_header_fields_too_large");
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") return svcError("invalid_json", "The request was not received in time.");
  return svcError("invalid_json", "The request could not be read as HTTP.");
}

export function clientErrorResponder(pipeline: CallPipeline) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    // A reset connection has nobody to answer.
    if (error.code === "ECONNRESET" || socket.destroyed) return;
    const requestId = newRequestId();
    const answer = (failure: CallFailure) => {
      if (socket.destroyed) return;
      const body = JSON.stringify(errorEnvelope(failure.described, requestId));
      const status = failure.described.definition.status;
      const headers = {
        "Content-Type": "application/json; charset=utf-8",
        "Content-Length": String(Buffer.byteLength(body)),
        Connection: "close",
        ...failure.headers,
      };
      const head = Object.entries(headers)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join("");
      socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head}\r\n${body}`);
    };
    void pipeline.refuseAnonymous(requestId, socket.remoteAddress ?? "unknown", errorFor(error.code)).then(answer);
  };
}
