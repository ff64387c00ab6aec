// The REST routes, read from the `google.api.http` annotations of the public services: one source of truth.
import { getOption, hasOption, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { http } from "../../gen/google/api/annotations_pb.ts";

export type HttpMethod = "GET" | "POST" | "PATCH" | "DELETE" | "PUT";

export interface RestRoute {
  httpMethod: HttpMethod;
  /** As annotated, e.g. `/v1/users/{id}`. */
  pathTemplate: string;
  /** In Fastify's syntax, e.g. `/v1/users/:id`. */
  fastifyPath: string;
  pathParams: string[];
  /** `*` (the whole request message), a field name, or "" for no body. */
  body: string;
  service: DescService;
  method: DescMethod;
}

const TEMPLATE_VARIABLE = /\{([a-z_][a-z0-9_]*)\}/g;

export function restRouteOf(service: DescService, method: DescMethod): RestRoute | null {
  if (!hasOption(method, http)) return null;
  const rule = getOption(method, http);
  const { case: verb, value } = rule.pattern;
  if (verb === undefined || verb === "custom") {
    throw new Error(`${method.parent.typeName}.${method.name}: unsupported google.api.http pattern`);
  }
  const pathTemplate = value;
  return {
    httpMethod: verb.toUpperCase() as HttpMethod,
    pathTemplate,
    fastifyPath: pathTemplate.replace(TEMPLATE_VARIABLE, ":$1"),
    pathParams: [...pathTemplate.matchAll(TEMPLATE_VARIABLE)].map((m) => m[1]!),
    body: rule.body,
    service,
    method,
  };
}
