// GET /v1/openapi.json: the document, without a key. It still carries the five headers, and since no key
// names a quota it is counted against the client address, like every request refused before authentication.
import type { DescService } from "@bufbuild/protobuf";
import type { FastifyInstance } from "fastify";
import { isKnownApiVersion, VERSION_HEADER } from "../../domain/api-version.ts";
import { svcError } from "../../domain/errors.ts";
import type { RequestGate } from "../../services/request-gate.ts";
import { rateLimitHeaders } from "../response-headers.ts";
import { buildOpenApiDocument, OPENAPI_PATH } from "./document.ts";

export interface OpenApiRouteOptions {
  /** The public services the gateway serves, so the document describes exactly the routes that exist. */
  services: readonly DescService[];
  gate: RequestGate;
}

export function registerOpenApiRoute(app: FastifyInstance, options: OpenApiRouteOptions): void {
  const body = JSON.stringify(buildOpenApiDocument(options.services));
  app.get(OPENAPI_PATH, async (request, reply) => {
    const rateLimit = await options.gate.countAnonymous(request.ip);
    reply.headers(rateLimitHeaders(rateLimit));
    const raw = request.headers[VERSION_HEADER];
    const version = Array.isArray(raw) ? raw.join(", ") : raw;
    if (version !== undefined && !isKnownApiVersion(version)) {
      throw svcError("unsupported_version", `Svc-Version "${version}" does not exist.`);
    }
    if (rateLimit.exceeded) {
      throw svcError("rate_limit_exceeded", undefined, { metadata: { retry_after: String(rateLimit.resetSeconds) } });
    }
    return reply.type("application/json; charset=utf-8").send(body);
  });
}
