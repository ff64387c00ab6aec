// Every error answer of the HTTP server, Fastify's own included, in the error envelope with its headers.
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { SvcError, svcError } from "../domain/errors.ts";
import { CallFailure, type CallPipeline, type RefusedCallShape } from "../pipeline/call-pipeline.ts";
import { errorEnvelope } from "../representations/error-envelope.ts";
import { MAX_BODY_BYTES } from "../domain/limits.ts";

/** Fastify raises its own errors while reading a request; each maps to a catalogue code. */
function fastifyErrorAsServiceError(error: FastifyError, request: FastifyRequest): SvcError | null {
  if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE" || error.statusCode === 413) {
    return svcError("payload_too_large", `The request body exceeds the maximum of ${MAX_BODY_BYTES / 1024} KiB.`);
  }
  // The route is the first check, also when Fastify refuses the Content-Type before the 404 handler runs.
  if (error.statusCode === 404 || request.is404) return svcError("route_not_found");
  // A Content-Type that is not even a media type, refused by Fastify while reading the body.
  if (error.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") {
    return svcError("unsupported_media_type", "The Content-Type header is not a valid media type: send application/json.");
  }
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return svcError("invalid_json", "The request could not be read as JSON.");
  }
  return null;
}

/**
 * A REST request refused before its call (no route, body too large) as its request log shows it, so a key that
 * names a project finds it there. Other paths (Connect's) are not REST calls.
 */
function refusedRestCall(request: FastifyRequest, reply: FastifyReply): RefusedCallShape | undefined {
  const path = request.url.split("?", 1)[0]!;
  if (!path.startsWith("/v1/")) return undefined;
  const matched = request.is404 ? undefined : request.routeOptions.url;
  return {
    authorization: request.headers.authorization,
    source: "rest",
    route: { verb: request.method, path, template: matched ? matched.replace(/:([A-Za-z_]+)/g, "{$1}") : null, successStatus: 200 },
    durationMs: reply.elapsedTime,
  };
}

export function errorRenderer(pipeline: CallPipeline) {
  return async function renderError(error: unknown, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    // Refused inside the pipeline, the headers are known; refused before it (route, size), the request is
    // counted against the client address.
    const failure =
      error instanceof CallFailure
        ? error
        : await pipeline.refuseAnonymous(
            request.id,
            request.ip,
            error instanceof SvcError ? error : (fastifyErrorAsServiceError(error as FastifyError, request) ?? error),
            refusedRestCall(request, reply),
          );
    await reply.code(failure.described.definition.status).headers(failure.headers).send(errorEnvelope(failure.described, failure.requestId));
  };
}
