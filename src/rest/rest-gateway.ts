// The public JSON API under /v1: each route is a thin adapter from Fastify to the call pipeline, which runs
// the same steps for every door, and to the same service method gRPC callers reach.
// Order of checks: route, body size, authentication, version header, rate limit, JSON (media type, UTF-8,
// syntax), idempotency key, validation, then the method's own lookups and conflicts.
import type { Message } from "@bufbuild/protobuf";
import { createContextValues } from "@connectrpc/connect";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { DescribedMethod } from "../api/method-description.ts";
import type { ServiceRegistry } from "../api/service-registry.ts";
import { svcError } from "../domain/errors.ts";
import type { CallPipeline } from "../pipeline/call-pipeline.ts";
import { checkJsonBodyEncoding } from "./body-encoding.ts";
import { canonicalJson, parseJsonObjectBody } from "./json-body.ts";
import { decodeRestRequest } from "./request-decoder.ts";
import { headerValue } from "./request-headers.ts";
import { pathOf } from "./request-path.ts";
import { RestHandlerContext } from "./rest-handler-context.ts";

export interface RestGatewayOptions {
  registry: ServiceRegistry;
  pipeline: CallPipeline;
  methods: readonly DescribedMethod[];
  /** Bodies larger than this answer 413 `payload_too_large`. */
  bodyLimit: number;
}

interface RestAnswer {
  status: number;
  body: unknown;
  /** The method's own answer, as it ran or was replayed. */
  message: Message;
}

/** A response message as the route presents it, with its success status. */
function answerOf(described: DescribedMethod, message: Message, path: string): RestAnswer {
  return { status: described.status, body: described.present(message, path), message };
}

function requestPath(request: FastifyRequest): string {
  return pathOf(request.url);
}

export async function restGateway(app: FastifyInstance, options: RestGatewayOptions): Promise<void> {
  const { registry, pipeline } = options;

  // Bodies stay raw until the key is checked: a bad key is a 401 even when the JSON is broken.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: options.bodyLimit }, (_request, body, done) => {
    done(null, body);
  });

  async function handle(described: DescribedMethod, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const params = request.params as Record<string, string>;
    // "/v1/events/" reaches "/v1/events/:id" with an empty id: no route names an empty segment.
    if (Object.values(params).some((value) => value === "")) {
      throw svcError("route_not_found", "No route matches this method and path.");
    }
    const path = requestPath(request);
    const context = new RestHandlerContext(
      described.service,
      described.method,
      described.route.httpMethod,
      request.url,
      request.headers,
      createContextValues(),
    );
    const call = pipeline.newCall({
      requestId: request.id,
      door: "rest",
      method: described.method,
      caller: { kind: "bearer", authorization: headerValue(request, "authorization") },
      version: headerValue(request, "svc-version"),
      clientAddress: request.ip,
      idempotencyKey: headerValue(request, "idempotency-key"),
      takesIdempotencyKey: described.takesIdempotencyKey,
      values: context.values,
      context: () => context,
      route: { verb: described.route.httpMethod, path, template: described.route.pathTemplate, successStatus: described.status },
    });
    const answer = await pipeline.run<RestAnswer>(call, {
      decode: () => {
        checkJsonBodyEncoding(headerValue(request, "content-type"), request.body as Buffer | undefined);
        const body = parseJsonObjectBody(request.body as Buffer | undefined, { required: described.operation.requestBody?.required === true });
        try {
          return {
            message: decodeRestRequest(described.route, { params, query: request.query as Record<string, string>, body }, described.nullMeaning),
          };
        } catch (refusal) {
          return { refusal, raw: `${path}\0${canonicalJson(body ?? {})}` };
        }
      },
      execute: async (message) => answerOf(described, await registry.invoke(described.method, message, context), path),
      answerOf: (answer) => answer.message,
      replayed: (message) => answerOf(described, message, path),
    });
    return reply.code(answer.status).headers(call.headers).send(answer.body);
  }

  for (const described of options.methods) {
    app.route({
      method: described.route.httpMethod,
      url: described.route.fastifyPath,
      handler: (request, reply) => handle(described, request, reply),
    });
  }
}
