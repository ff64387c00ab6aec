// The public JSON API under /v1: each route is a thin adapter from Fastify to the call pipeline, which runs
// the same steps for every transport, and to the same service method gRPC callers reach.
// Order of checks: route, body size, authentication, version header, rate limit, JSON (media type, UTF-8,
// syntax), idempotency key, validation, then the method's own lookups and conflicts.
import { fromBinary, toBinary, type Message } from "@bufbuild/protobuf";
import { createContextValues } from "@connectrpc/connect";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { creationReservationKey, type CreationReservation } from "../access/creation-reservation.ts";
import { principalKey, type Principal } from "../access/principal.ts";
import type { DescribedMethod } from "../api/method-description.ts";
import type { ServiceRegistry } from "../api/service-registry.ts";
import { svcError } from "../domain/errors.ts";
import type { CallPipeline } from "../pipeline/call-pipeline.ts";
import { errorEnvelope } from "../pipeline/error-envelope.ts";
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
  /** The method's own answer, when it ran or was replayed without error. */
  message?: Message;
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
    const call = pipeline.newCall({
      requestId: request.id,
      transport: "rest",
      method: described.method,
      authorization: headerValue(request, "authorization"),
      version: headerValue(request, "svc-version"),
      clientAddress: request.ip,
      idempotencyKey: headerValue(request, "idempotency-key"),
      takesIdempotencyKey: described.takesIdempotencyKey,
    });
    let body: Record<string, unknown> | undefined;
    const output = described.method.output;
    const answer = await pipeline.run<RestAnswer>(call, {
      prepare: () => {
        checkJsonBodyEncoding(headerValue(request, "content-type"), request.body as Buffer | undefined);
        body = parseJsonObjectBody(request.body as Buffer | undefined, { required: described.operation.requestBody?.required === true });
        return [described.route.httpMethod, path, canonicalJson(body ?? {})];
      },
      execute: async (principal, reservation) => {
        const message = decodeRestRequest(described.route, { params, query: request.query as Record<string, string>, body }, described.nullMeaning);
        const result = await registry.invoke(described.method, message, handlerContext(described, request, principal, reservation));
        return { status: described.status, body: described.present(result, path), message: result };
      },
      // Answers are stored as the method's message and presented again on replay, so a replay can be brought
      // up to date (ServiceRegistry.refreshReplay); refusals as their envelope, with the original request id.
      // Only answers of a run are stored, and a run always has its message.
      store: (result) => ({ status: result.status, body: { message: Buffer.from(toBinary(output, result.message!)).toString("base64") } }),
      storeError: (error, requestId) => ({ status: error.definition.status, body: errorEnvelope(error, requestId) }),
      replay: async (stored, principal) => {
        if (stored.status >= 400) return { status: stored.status, body: stored.body };
        const storedMessage = fromBinary(output, Buffer.from((stored.body as { message: string }).message, "base64"));
        const current = await registry.refreshReplay(described.method, storedMessage, handlerContext(described, request, principal, null));
        return { status: stored.status, body: described.present(current, path) };
      },
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

function handlerContext(described: DescribedMethod, request: FastifyRequest, principal: Principal, reservation: CreationReservation | null) {
  const values = createContextValues().set(principalKey, principal).set(creationReservationKey, reservation);
  return new RestHandlerContext(described.service, described.method, described.route.httpMethod, request.url, request.headers, values);
}
