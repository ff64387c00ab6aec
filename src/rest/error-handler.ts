// Every error answer of the HTTP server, Fastify's own included, in the spec's envelope with its headers.
import { ConnectError } from "@connectrpc/connect";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { describeError, svcError, type DescribedError } from "../domain/errors.ts";
import type { RequestGate } from "../access/request-gate.ts";
import { errorEnvelope } from "../pipeline/error-envelope.ts";
import { RATE_LIMIT_LIMIT_HEADER, rateLimitHeaders } from "../pipeline/response-headers.ts";

/** Fastify raises its own errors while reading a request; each has a spec code. */
function describeFastifyError(error: FastifyError): DescribedError | null {
  if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE" || error.statusCode === 413) {
    return describeError(svcError("payload_too_large", "The request body exceeds the maximum of 64 KiB."));
  }
  if (error.statusCode === 404) return describeError(svcError("route_not_found"));
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return describeError(svcError("invalid_json", "The request could not be read as JSON."));
  }
  return null;
}

export interface ErrorRendererOptions {
  gate: RequestGate;
  /** Called with errors that are not the service's own (bugs, outages): they answer 500. */
  onInternalError: (error: unknown, request: FastifyRequest) => void;
}

export function errorRenderer(options: ErrorRendererOptions) {
  return async function renderError(error: unknown, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const described = error instanceof ConnectError ? describeError(error) : describeFastifyError(error as FastifyError) ?? describeError(error);
    if (described.code === "internal_error") options.onInternalError(error, request);
    if (!reply.hasHeader(RATE_LIMIT_LIMIT_HEADER)) {
      // Refused before authentication (route, size): counted against the client address. If counting fails
      // too (the database is down), this must not throw: Fastify's fallback would leak the driver's message.
      let status;
      try {
        status = await options.gate.countAnonymous(request.ip);
      } catch (countError) {
        options.onInternalError(countError, request);
        status = options.gate.uncounted();
      }
      reply.headers(rateLimitHeaders(status));
    }
    if (described.code === "rate_limit_exceeded") {
      reply.header("Retry-After", described.metadata.retry_after ?? reply.getHeader("X-RateLimit-Reset"));
    }
    await reply.code(described.definition.status).send(errorEnvelope(described, request.id));
  };
}
