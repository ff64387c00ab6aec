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
  /**
   * Members of a `*` body that fill a field of another name (JSON member -> field name); every other member fills
   * the field of its name. A field named as a target here answers only to its member name, and a field whose
   * name is taken by a member is not read from the body (a deprecated field whose replacement took its name).
   */
  renamedMembers?: Readonly<Record<string, string>>;
  /**
   * Fields of a `*` body that REST does not take (no member fills them): the exact money fields, since REST gives
   * money as JSON numbers of dollars, which fill the dollars fields.
   */
  rpcOnlyFields?: readonly string[];
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
