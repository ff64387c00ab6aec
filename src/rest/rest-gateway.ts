// The public JSON API under /v1: each route transcodes to the same service method gRPC callers reach.
// Order of checks: route, body size, authentication, version header, rate limit, JSON, idempotency key,
// validation, then the method's own lookups and conflicts.
import { createContextValues, createHandlerContext } from "@connectrpc/connect";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { describeError, svcError } from "../domain/errors.ts";
import { IdempotencyGuard, type IdempotencyClaim } from "../access/idempotency-guard.ts";
import { principalKey, type Principal } from "../access/principal.ts";
import type { RequestGate } from "../access/request-gate.ts";
import type { ServiceRegistry } from "../api/service-registry.ts";
import { errorEnvelope } from "../pipeline/error-envelope.ts";
import { headerValue } from "./request-headers.ts";
import { canonicalJson, parseJsonObjectBody } from "./json-body.ts";
import { decodeRestRequest, type NullMeaning } from "./request-decoder.ts";
import { respond, responderKey, type ResponderTable } from "../api/responders.ts";
import { rateLimitHeaders } from "../pipeline/response-headers.ts";
import { buildRestRouteTable, isMutatingMethod, type RestRoute } from "../api/rest-route-table.ts";

export interface RestGatewayOptions {
  registry: ServiceRegistry;
  gate: RequestGate;
  idempotency: IdempotencyGuard;
  responders: ResponderTable;
  /** What null means in PATCH bodies, by method (`svc.v1.UsersService.UpdateUser`); default "invalid". */
  patchNullMeaning: Record<string, NullMeaning>;
  /** Bodies larger than this answer 413 `payload_too_large`. */
  bodyLimit: number;
}

export const IDEMPOTENCY_KEY_HEADER = "idempotency-key";
export const REPLAYED_HEADER = "Idempotent-Replayed";

function requestPath(request: FastifyRequest): string {
  const q = request.url.indexOf("?");
  return q === -1 ? request.url : request.url.slice(0, q);
}

function nullMeaningOf(route: RestRoute, table: Record<string, NullMeaning>): NullMeaning {
  if (route.body === "*") return "absent";
  return table[responderKey(route.method)] ?? "invalid";
}

export async function restGateway(app: FastifyInstance, options: RestGatewayOptions): Promise<void> {
  const { registry, gate, idempotency, responders } = options;

  // Bodies stay raw until the key is checked: a bad key is a 401 even when the JSON is broken.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: options.bodyLimit }, (_request, body, done) => {
    done(null, body);
  });

  async function handle(route: RestRoute, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    // "/v1/events/" reaches "/v1/events/:id" with an empty id: no route names an empty segment.
    if (Object.values(request.params as Record<string, string>).some((value) => value === "")) {
      throw svcError("route_not_found", "No route matches this method and path.");
    }
    const admission = await gate.admit({
      authorization: headerValue(request, "authorization"),
      version: headerValue(request, "svc-version"),
      clientAddress: request.ip,
    });
    reply.headers(rateLimitHeaders(admission.rateLimit));
    if (admission.error) throw admission.error;
    const principal = admission.principal!;
    const body = parseJsonObjectBody(request.body as Buffer | undefined);
    const path = requestPath(request);

    let claim: IdempotencyClaim | null = null;
    const key = headerValue(request, IDEMPOTENCY_KEY_HEADER);
    if (key !== undefined && isMutatingMethod(route.method)) {
      const fingerprint = IdempotencyGuard.fingerprint(route.httpMethod, path, canonicalJson(body ?? {}));
      claim = await idempotency.claim(principal, "rest", key, fingerprint);
      if (claim.replay) {
        const stored = claim.replay;
        return reply.code(stored.status).headers({ "X-Request-Id": stored.request_id, [REPLAYED_HEADER]: "true" }).send(stored.body);
      }
    }
    try {
      const message = decodeRestRequest(
        route,
        { params: request.params as Record<string, string>, query: request.query as Record<string, string>, body },
        nullMeaningOf(route, options.patchNullMeaning),
      );
      const result = await registry.invoke(route.method, message, handlerContext(route, request, principal));
      const response = respond(responders, route.method, result, path);
      if (claim) await idempotency.settle(claim.recordId, { status: response.status, body: response.body, request_id: request.id });
      return reply.code(response.status).send(response.body);
    } catch (error) {
      if (claim) {
        const described = describeError(error);
        await idempotency.settle(claim.recordId, {
          status: described.definition.status,
          body: errorEnvelope(described, request.id),
          request_id: request.id,
        });
      }
      throw error;
    }
  }

  for (const route of buildRestRouteTable(registry.publicServices())) {
    app.route({
      method: route.httpMethod,
      url: route.fastifyPath,
      handler: (request, reply) => handle(route, request, reply),
    });
  }
}

function handlerContext(route: RestRoute, request: FastifyRequest, principal: Principal) {
  return createHandlerContext({
    service: route.service,
    method: route.method,
    protocolName: "rest",
    requestMethod: route.httpMethod,
    url: request.url,
    requestHeader: Object.entries(request.headers).flatMap(([name, value]) =>
      value === undefined ? [] : [[name, Array.isArray(value) ? value.join(", ") : value] as [string, string]],
    ),
    contextValues: createContextValues().set(principalKey, principal),
  });
}
