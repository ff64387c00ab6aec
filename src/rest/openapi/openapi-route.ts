// GET /v1/openapi.json: the document, without a key. It still carries the five headers, and since no key
// names a quota it is counted against the client address, like every request refused before authentication.
import type { DescService } from "@bufbuild/protobuf";
import type { FastifyInstance } from "fastify";
import { VERSION_HEADER } from "../../domain/api-version.ts";
import type { RequestGate } from "../../access/request-gate.ts";
import { headerValue } from "../request-headers.ts";
import { rateLimitHeaders } from "../../pipeline/response-headers.ts";
import { buildOpenApiDocument, OPENAPI_PATH } from "./document.ts";

export interface OpenApiRouteOptions {
  /** The public services the gateway serves, so the document describes exactly the routes that exist. */
  services: readonly DescService[];
  gate: RequestGate;
}

export function registerOpenApiRoute(app: FastifyInstance, options: OpenApiRouteOptions): void {
  const body = JSON.stringify(buildOpenApiDocument(options.services));
  app.get(OPENAPI_PATH, async (request, reply) => {
    const admission = await options.gate.admitAnonymous({ version: headerValue(request, VERSION_HEADER), clientAddress: request.ip });
    reply.headers(rateLimitHeaders(admission.rateLimit));
    if (admission.error) throw admission.error;
    return reply.type("application/json; charset=utf-8").send(body);
  });
}
