// GET /v1/openapi.json: the document, without a key. It still carries the five headers, and since no key
// names a quota it is counted against the client address, like every request refused before authentication.
// HEAD answers the same headers without the body, and the document may be read from any origin (CORS), so
// documentation tools in a browser (Swagger UI, Redoc, Stoplight) can load it; a preflight OPTIONS answers 204.
// Only this route allows other origins: the API routes take secret keys, which belong on servers, not in web pages.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { DescribedMethod } from "../../api/method-description.ts";
import { VERSION_HEADER } from "../../domain/api-version.ts";
import type { CallPipeline } from "../../pipeline/call-pipeline.ts";
import { headerValue } from "../request-headers.ts";
import { buildOpenApiDocument, OPENAPI_CORS_HEADERS, OPENAPI_PATH } from "./document.ts";

export interface OpenApiRouteOptions {
  /** The public methods the gateway serves, so the document describes exactly the routes that exist. */
  methods: readonly DescribedMethod[];
  pipeline: CallPipeline;
}

export function registerOpenApiRoute(app: FastifyInstance, options: OpenApiRouteOptions): void {
  // Built on the first request, not at start: most processes (workers, tests) never serve it.
  let body: string | undefined;
  const admit = async (request: FastifyRequest, reply: FastifyReply) => {
    // Set first, so that a refusal (429, 400 unsupported_version) can be read by the page too.
    reply.headers(OPENAPI_CORS_HEADERS);
    return options.pipeline.admitAnonymous(request.id, request.ip, headerValue(request, VERSION_HEADER));
  };
  app.route({
    method: ["GET", "HEAD"],
    url: OPENAPI_PATH,
    handler: async (request, reply) => {
      const headers = await admit(request, reply);
      // HEAD: Node sends the headers (Content-Length included) and no body.
      body ??= JSON.stringify(buildOpenApiDocument(options.methods));
      return reply.headers(headers).type("application/json; charset=utf-8").send(body);
    },
  });
  app.options(OPENAPI_PATH, async (request, reply) => {
    const headers = await admit(request, reply);
    return reply.code(204).headers(headers).header("Access-Control-Max-Age", "86400").send();
  });
}
