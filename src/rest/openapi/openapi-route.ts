// GET /v1/openapi.json: the document, without a key. It still carries the five headers, and since no key
// names a quota it is counted against the client address, like every request refused before authentication.
import type { FastifyInstance } from "fastify";
import type { DescribedMethod } from "../../api/method-description.ts";
import { VERSION_HEADER } from "../../domain/api-version.ts";
import type { CallPipeline } from "../../pipeline/call-pipeline.ts";
import { headerValue } from "../request-headers.ts";
import { buildOpenApiDocument, OPENAPI_PATH } from "./document.ts";

export interface OpenApiRouteOptions {
  /** The public methods the gateway serves, so the document describes exactly the routes that exist. */
  methods: readonly DescribedMethod[];
  pipeline: CallPipeline;
}

export function registerOpenApiRoute(app: FastifyInstance, options: OpenApiRouteOptions): void {
  const body = JSON.stringify(buildOpenApiDocument(options.methods));
  app.get(OPENAPI_PATH, async (request, reply) => {
    const headers = await options.pipeline.admitAnonymous(request.id, request.ip, headerValue(request, VERSION_HEADER));
    return reply.headers(headers).type("application/json; charset=utf-8").send(body);
  });
}
