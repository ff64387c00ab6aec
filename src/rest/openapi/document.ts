// The OpenAPI 3.1 document of the public REST API: paths and methods from the route table (the same one the
// gateway serves), schemas and error responses from the files beside this one.
import { LATEST_API_VERSION } from "../../domain/api-version.ts";
import type { ErrorCode } from "../../domain/errors.ts";
import { IdempotencyGuard } from "../../access/idempotency-guard.ts";
import type { DescribedMethod } from "../../api/method-description.ts";
import type { RestRoute } from "../../api/rest-route-table.ts";
import { closedObject, type JsonSchema, named, type TSchema } from "../../representations/json-schema.ts";
import { errorResponse, errorResponses } from "./error-responses.ts";
import {
  headerComponents,
  headersOf,
  IDEMPOTENCY_KEY_PARAMETER,
  parameterComponents,
  pathIdentifierOf,
  queryParameter,
  VERSION_PARAMETER,
} from "./headers-and-parameters.ts";
import { SchemaComponents } from "./schema-components.ts";
import { webhookDeliveryRequest } from "./webhook-delivery-request.ts";

export const OPENAPI_PATH = "/v1/openapi.json";

/**
 * The document's own CORS headers, on every answer of its route: any origin may read it (browser documentation
 * tools), with the five headers; no API route sends them (docs/contract.md, Surface).
 */
export const OPENAPI_CORS_HEADERS: Record<string, string> = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
  "Access-Control-Allow-Headers": "Svc-Version",
  "Access-Control-Expose-Headers": "X-Request-Id, X-API-Version, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After",
};

export type OpenApiDocument = {
  openapi: string;
  info: { title: string; version: string; [key: string]: unknown };
  paths: Record<string, Record<string, JsonSchema>>;
  components: { schemas: Record<string, JsonSchema>; [key: string]: unknown };
  [key: string]: unknown;
};

/** Answered by every route that takes a key: the key checks, the version header, the rate limit, a crash. */
const KEYED_ROUTE_ERRORS: ErrorCode[] = [
  "unsupported_version",
  "missing_api_key",
  "invalid_api_key",
  "api_key_revoked",
  "organization_suspended",
  "live_not_enabled",
  // Unknown query or body parameters, wrong types.
  "validation_error",
  "rate_limit_exceeded",
  // Headers larger than the server reads (16 KiB in all), answered before anything else.
  "request_header_fields_too_large",
  "internal_error",
];
/** Answered by routes that take a body and an Idempotency-Key (POST, PATCH, DELETE). */
const MUTATING_ROUTE_ERRORS: ErrorCode[] = [
  "invalid_json",
  "payload_too_large",
  "unsupported_media_type",
  "idempotency_key_invalid",
  "idempotency_in_progress",
  "idempotency_key_reuse",
];
const OPENAPI_ROUTE_ERRORS: ErrorCode[] = ["unsupported_version", "rate_limit_exceeded", "request_header_fields_too_large", "internal_error"];

/** A JSON media type; `example` (an operation's own, src/api/method-description.ts) beside its schema when given. */
const jsonContent = (schema: object, example?: unknown) => ({ "application/json": { schema, ...(example !== undefined ? { example } : {}) } });

/** The body of a route whose request message has no field of its own: `{}` or none, anything else is 422. */
const emptyBodySchema = closedObject({}, { description: "No field: send `{}` or no body." });
named("EmptyBody", emptyBodySchema, [{}]);

/** The example of an operation's body or answer: its own, else its schema's first. */
function exampleOf(schema: TSchema, own: unknown): unknown {
  return own ?? (schema.examples as unknown[] | undefined)?.[0];
}

function requestFieldNames(route: RestRoute): string[] {
  return route.method.input.fields.map((field) => field.name).filter((name) => !route.pathParams.includes(name));
}

function operationOf(described: DescribedMethod): JsonSchema {
  const { route, operation: doc, status } = described;
  const mutating = described.takesIdempotencyKey;
  const replayable = (status: number) => mutating && IdempotencyGuard.isReplayable(status);
  const pathIds = route.pathParams.map((param) => ({ param, ...pathIdentifierOf(route.pathTemplate, param) }));
  const queryFields = route.body === "" ? requestFieldNames(route) : [];

  const codes: ErrorCode[] = [...KEYED_ROUTE_ERRORS, ...pathIds.map((id) => id.notFound), ...(doc.errors ?? [])];
  if (mutating) codes.push(...MUTATING_ROUTE_ERRORS);
  // Refusals of live keys right after admission (src/api/method-access.ts).
  if (described.sandboxOnly) codes.push("sandbox_only");
  if (described.liveSetting) codes.push("live_feature_unavailable");
  if (queryFields.includes("starting_after")) codes.push("invalid_cursor");

  return {
    operationId: route.method.localName,
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    tags: [doc.tag],
    parameters: [
      ...pathIds.map(({ param, schema }) => ({ name: param, in: "path", required: true, schema })),
      ...queryFields.map((field) => queryParameter(field, `${route.httpMethod} ${route.pathTemplate}`)),
      ...(mutating ? [IDEMPOTENCY_KEY_PARAMETER] : []),
      VERSION_PARAMETER,
    ],
    ...(doc.requestBody
      ? {
          requestBody: {
            required: doc.requestBody.required,
            content: jsonContent(doc.requestBody.schema, exampleOf(doc.requestBody.schema, doc.requestBody.example)),
          },
        }
      : route.body !== ""
        ? // The route reads a JSON body whose message has no field of its own: `{}` or none, anything else is 422.
          { requestBody: { required: false, content: jsonContent(emptyBodySchema, {}) } }
        : {}),
    responses: {
      [String(status)]: {
        description: doc.success.description,
        headers: headersOf(status, replayable(status)),
        content: jsonContent(doc.success.schema, exampleOf(doc.success.schema, doc.success.example)),
      },
      ...errorResponses(codes, replayable),
    },
  };
}

/** The headers of an answer of the document's route: the five (Retry-After on 429) and Access-Control-Allow-Origin. */
function openApiRouteHeaders(status: number): Record<string, JsonSchema> {
  return { ...headersOf(status, false), "Access-Control-Allow-Origin": { $ref: "#/components/headers/AccessControlAllowOrigin" } };
}

function openApiRouteErrors(): Record<string, JsonSchema> {
  const responses = errorResponses(OPENAPI_ROUTE_ERRORS, () => false);
  for (const [status, response] of Object.entries(responses)) response.headers = openApiRouteHeaders(Number(status));
  return responses;
}

const DOCUMENT_SCHEMA: JsonSchema = {
  type: "object",
  required: ["openapi", "info", "servers", "paths"],
  properties: {
    openapi: { type: "string", pattern: "^3\\.1\\.\\d+$" },
    info: { type: "object" },
    servers: { type: "array", items: { type: "object" } },
    paths: { type: "object" },
  },
  // An outline: the real answer is this whole document.
  examples: [{ openapi: "3.1.0", info: { title: "Svc API", version: LATEST_API_VERSION }, servers: [{ url: "/" }], paths: { [OPENAPI_PATH]: {} } }],
};

const openApiOperations: Record<string, JsonSchema> = {
  get: {
    operationId: "getOpenApiDocument",
    summary: "This OpenAPI 3.1 document",
    description:
      "Needs no key, and any origin may read it (CORS), so browser documentation tools can load it. Counted against the client address for rate limiting.",
    tags: ["Meta"],
    security: [],
    parameters: [VERSION_PARAMETER],
    responses: {
      "200": {
        description: "The OpenAPI 3.1 document of this API.",
        headers: openApiRouteHeaders(200),
        content: jsonContent(DOCUMENT_SCHEMA, (DOCUMENT_SCHEMA.examples as unknown[])[0]),
      },
      ...openApiRouteErrors(),
    },
  },
  head: {
    operationId: "headOpenApiDocument",
    summary: "The document's headers",
    description: "The headers GET answers, without the body.",
    tags: ["Meta"],
    security: [],
    parameters: [VERSION_PARAMETER],
    responses: { "200": { description: "The headers of the document.", headers: openApiRouteHeaders(200) }, ...openApiRouteErrors() },
  },
  options: {
    operationId: "preflightOpenApiDocument",
    summary: "CORS preflight of the document",
    description: "What a browser asks before reading the document from another origin: GET and HEAD, with the `Svc-Version` header, from any origin.",
    tags: ["Meta"],
    security: [],
    parameters: [VERSION_PARAMETER],
    responses: {
      "204": {
        description: "The document may be read from any origin.",
        headers: {
          ...openApiRouteHeaders(204),
          "Access-Control-Allow-Methods": { description: "`GET, HEAD, OPTIONS`.", schema: { type: "string" } },
          "Access-Control-Max-Age": { description: "How long the browser may keep this answer, in seconds.", schema: { type: "integer" } },
        },
      },
      ...openApiRouteErrors(),
    },
  },
};

export function buildOpenApiDocument(methods: readonly DescribedMethod[]): OpenApiDocument {
  const paths: Record<string, Record<string, JsonSchema>> = { [OPENAPI_PATH]: openApiOperations };
  for (const described of methods) {
    (paths[described.route.pathTemplate] ??= {})[described.route.httpMethod.toLowerCase()] = operationOf(described);
  }
  // The schemas of the document are those its operations, webhooks and responses meet, each named once.
  const components = new SchemaComponents();
  const document = components.write({
    openapi: "3.1.0",
    info: {
      title: "Svc API",
      version: LATEST_API_VERSION,
      summary: "Users, wallets, events and signed webhooks of a payments-and-wallet backend.",
      description:
        "Every response carries X-Request-Id, X-API-Version and the X-RateLimit-* headers. Errors share one envelope; " +
        "clients branch on `error.code`. An unmatched method and path answers 404 route_not_found (components.responses.RouteNotFound).",
    },
    servers: [{ url: "/", description: "The host serving this document." }],
    security: [{ apiKey: [] }],
    tags: [
      {
        name: "Users",
        description: "End users of a project and environment: creation, profile, wallets, and the signup flow that governs creation.",
      },
      {
        name: "Phone verification",
        description: "SMS codes that verify a user's phone number (live keys need the project's live_phone_verification_enabled).",
      },
      {
        name: "KYC sessions",
        description: "Identity verification sessions: the page where the end user verifies, and its outcome in the user's kyc_status.",
      },
      { name: "Sandbox", description: "Drivers of sandbox objects; sandbox keys only (a live key is 403 sandbox_only)." },
      { name: "Events", description: "What happened in a project, kept 30 days; the same events webhooks deliver." },
      {
        name: "Request logs",
        description:
          "Every call of a project and environment through any door (REST, Connect, gRPC, the dashboard), kept 30 days: find a call by its request id.",
      },
      { name: "Transactions", description: "Wallet money: deposits and withdrawals, amounts in dollars with at most 2 decimals." },
      { name: "Webhook endpoints", description: "Where events are delivered, signed with the endpoint's secret; test sends and secret rotation." },
      { name: "Webhook deliveries", description: "Each event's delivery to an endpoint with its attempts; replay of one, recovery of a window." },
      { name: "Meta", description: "This document, readable without a key." },
    ],
    paths,
    webhooks: { event: webhookDeliveryRequest },
    components: {
      securitySchemes: {
        apiKey: {
          type: "http",
          scheme: "bearer",
          description:
            "A secret API key, `svc_test_…` (sandbox) or `svc_live_…` (live); the key decides the project and environment read and written.",
        },
      },
      parameters: parameterComponents,
      headers: headerComponents,
      // No path describes an unmatched method and path, so its one answer is documented here.
      responses: { RouteNotFound: errorResponse(404, ["route_not_found"], false) },
    },
  }) as OpenApiDocument;
  // By name: the order they are met in says nothing to a reader.
  document.components.schemas = Object.fromEntries(Object.entries(components.schemas).sort(([a], [b]) => (a < b ? -1 : 1)));
  return document;
}
