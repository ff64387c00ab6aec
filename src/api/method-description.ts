// One description per public method, typed by the generated service descriptors: how its REST answer is
// presented, its success status, its OpenAPI operation, what null means in its PATCH body and whether it
// takes an Idempotency-Key. The REST gateway, the OpenAPI document and the RPC pipeline all read this, so
// adding a REST method is the proto, the ServiceImpl and one entry here; a method left out fails type-checking.
import type { DescMessage, DescMethod, DescService, MessageShape } from "@bufbuild/protobuf";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import type { ErrorCode } from "../domain/errors.ts";
import type { TSchema } from "../representations/json-schema.ts";
import { restRouteOf, type RestRoute } from "./rest-route-table.ts";

/** What `null` means for a body field: the same as leaving it out, clear it (PATCH), or a type error. */
export type NullMeaning = "absent" | "clear" | "invalid";

/** A project setting without which live keys may not call a method (403 live_feature_unavailable). */
export type LiveFeatureSetting = "live_phone_verification_enabled";

/** The OpenAPI operation of a method, beyond what its route says. */
export interface OperationDoc {
  summary: string;
  description?: string;
  tag: string;
  /**
   * The success response's schema (its definition in representations/) and description; the status is the
   * method's. `example`: an answer of this operation, shown beside the schema (it must validate against it).
   */
  success: { schema: TSchema; description: string; example?: unknown };
  /** Schema of the JSON body; methods without one refuse any field (422 validation_error). `example`: a body it takes. */
  requestBody?: { schema: TSchema; required: boolean; example?: unknown };
  /** Codes of the method's own rules and conflicts; codes every route of its kind answers are added from the route. */
  errors?: ErrorCode[];
}

export interface MethodEntry<O extends DescMessage> {
  status: 200 | 201;
  /** The JSON body of the answer; `path` is the request path without its query (the `url` of lists). */
  present: (response: MessageShape<O>, path: string) => unknown;
  operation: OperationDoc;
  /** What null means in a PATCH body (a route whose body is one field); default "invalid". */
  patchNull?: "clear" | "invalid";
  /** Sandbox keys only: a live key is refused 403 sandbox_only right after admission, before anything else. */
  sandboxOnly?: true;
  /** Live keys need this project setting: else 403 live_feature_unavailable right after admission. */
  liveSetting?: LiveFeatureSetting;
  /** Members of the REST body (a `*` body) that fill a request field of another name: JSON member -> field name. */
  renamedMembers?: Readonly<Record<string, string>>;
  /** Fields of the request (a `*` body) that the REST body does not take: they are for RPC clients only. */
  rpcOnlyFields?: readonly string[];
}

/**
 * Every unary method of the service, each with its entry: a missing one is a type error. Streaming methods have
 * no REST route and no entry: they are served over gRPC, Connect and gRPC-Web only.
 */
export type ServiceEntries<Methods extends GenServiceMethods> = {
  [K in keyof Methods as Methods[K]["methodKind"] extends "unary" ? K : never]: MethodEntry<Methods[K]["output"]>;
};

export interface DescribedMethod {
  service: DescService;
  method: DescMethod;
  route: RestRoute;
  status: 200 | 201;
  present: (response: unknown, path: string) => unknown;
  operation: OperationDoc;
  nullMeaning: NullMeaning;
  /** Mutating methods (every verb but GET) honour an Idempotency-Key. */
  takesIdempotencyKey: boolean;
  sandboxOnly: boolean;
  liveSetting: LiveFeatureSetting | null;
}

export function describeService<Methods extends GenServiceMethods>(
  service: GenService<Methods>,
  entries: ServiceEntries<Methods>,
): DescribedMethod[] {
  const descriptor = service as unknown as DescService;
  return descriptor.methods
    .filter((method) => method.methodKind === "unary")
    .map((method) => {
      const entry = (entries as Record<string, MethodEntry<DescMessage> | undefined>)[method.localName];
      const route = restRouteOf(descriptor, method);
      // Types catch a missing entry; these catch a proto whose annotation the entries do not match.
      if (!entry) throw new Error(`${descriptor.typeName}.${method.name} has no API entry`);
      if (!route) throw new Error(`${descriptor.typeName}.${method.name} has no google.api.http route`);
      for (const [member, field] of Object.entries(entry.renamedMembers ?? {})) {
        if (route.body !== "*" || !method.input.fields.some((f) => f.name === field)) {
          throw new Error(`${descriptor.typeName}.${method.name}: body member ${member} names no field ${field} of a * body`);
        }
      }
      for (const field of entry.rpcOnlyFields ?? []) {
        if (route.body !== "*" || !method.input.fields.some((f) => f.name === field)) {
          throw new Error(`${descriptor.typeName}.${method.name}: RPC-only ${field} names no field of a * body`);
        }
      }
      return {
        service: descriptor,
        method,
        route: {
          ...route,
          ...(entry.renamedMembers ? { renamedMembers: entry.renamedMembers } : {}),
          ...(entry.rpcOnlyFields ? { rpcOnlyFields: entry.rpcOnlyFields } : {}),
        },
        status: entry.status,
        present: entry.present as (response: unknown, path: string) => unknown,
        operation: entry.operation,
        nullMeaning: route.body === "*" ? "absent" : (entry.patchNull ?? "invalid"),
        takesIdempotencyKey: route.httpMethod !== "GET",
        sandboxOnly: entry.sandboxOnly === true,
        liveSetting: entry.liveSetting ?? null,
      };
    });
}
