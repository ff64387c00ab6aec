// Checks REST responses against the OpenAPI document: the operation for the path and method, the response
// for the status, the body against its schema and the headers against theirs. Responses outside /v1 are
// not part of the public API and are skipped.
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { RecordedResponse } from "./response-log.ts";

type Json = { [key: string]: any };

const DOCUMENT_ID = "urn:svc:openapi";

interface PathMatcher {
  template: string;
  pattern: RegExp;
  params: number;
}

function pathMatchers(document: Json): PathMatcher[] {
  return (
    Object.keys(document.paths)
      .map((template) => ({
        template,
        pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+")}$`),
        params: (template.match(/\{/g) ?? []).length,
      }))
      // A literal segment wins over a parameter: `/v1/users/search` before `/v1/users/{id}`.
      .sort((a, b) => a.params - b.params)
  );
}

function pointer(...segments: string[]): string {
  return segments.map((s) => encodeURIComponent(s.replace(/~/g, "~0").replace(/\//g, "~1"))).join("/");
}

function resolve(document: Json, value: Json): Json {
  let current = value;
  while (typeof current?.$ref === "string") {
    current = current.$ref
      .slice(2)
      .split("/")
      .reduce((node: Json, s: string) => node[decodeURIComponent(s).replace(/~1/g, "/").replace(/~0/g, "~")], document);
  }
  return current;
}

/** The public API the document describes; other paths (Connect, /healthz) are not its concern. */
export function isPublicApiPath(path: string): boolean {
  return /^\/v1(\/|\?|$)/.test(path);
}

/**
 * Ajv's errors, each with where it is and the offending property or allowed values where Ajv gives them.
 * Array indexes read `*`, so the same fault in every item of a list is reported once.
 */
function describeErrors(errors: ErrorObject[] | null | undefined, root: string): string {
  const messages = (errors ?? []).map((e) => {
    const detail = e.params.additionalProperty ?? e.params.allowedValues ?? e.params.allowedValue;
    const where = e.instancePath.replace(/\/\d+(?=\/|$)/g, "/*");
    return `${root}${where} ${e.message}${detail !== undefined ? ` (${JSON.stringify(detail)})` : ""}`;
  });
  return [...new Set(messages)].join("; ");
}

export class OpenApiContract {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  /** Header values are strings; integer headers are checked on their numeric value. */
  private readonly headerAjv = new Ajv2020({ strict: false, allErrors: true, coerceTypes: true });
  private readonly matchers: PathMatcher[];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly document: Json) {
    addFormats.default(this.ajv);
    addFormats.default(this.headerAjv);
    this.ajv.addSchema({ ...document, $id: DOCUMENT_ID });
    this.matchers = pathMatchers(document);
  }

  private validator(schemaPointer: string): ValidateFunction {
    let validate = this.validators.get(schemaPointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}#/${schemaPointer}` });
      this.validators.set(schemaPointer, validate);
    }
    return validate;
  }

  private headerValidator(name: string, schema: Json): ValidateFunction {
    const key = `header:${name}`;
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.headerAjv.compile({ type: "object", properties: { [name]: schema } });
      this.validators.set(key, validate);
    }
    return validate;
  }

  /** The response object describing this answer (pointer and the template it is under), or why there is none. */
  private describedResponse(method: string, path: string, status: number): { pointer: string; template: string } | string {
    // A path that is not valid percent-encoding names no resource: it matches no operation.
    const decodable = (() => {
      try {
        decodeURIComponent(path);
        return true;
      } catch {
        return false;
      }
    })();
    const matcher = decodable ? this.matchers.find((m) => m.pattern.test(path) && this.document.paths[m.template][method]) : undefined;
    if (!matcher) {
      // An unmatched method and path has one documented answer.
      return status === 404
        ? { pointer: pointer("components", "responses", "RouteNotFound"), template: "(no route)" }
        : `no operation for this method and path, and ${status} is not its route_not_found answer`;
    }
    const responses = this.document.paths[matcher.template][method].responses;
    const key = [String(status), `${String(status)[0]}XX`, "default"].find((k) => responses[k]);
    if (!key) return `${matcher.template} documents no ${status} response`;
    return { pointer: pointer("paths", matcher.template, method, "responses", key), template: matcher.template };
  }

  /** Every way `response` departs from the document, each prefixed with method, template and status. */
  breachesOf(response: RecordedResponse): string[] {
    const method = response.method.toLowerCase();
    const path = response.path.split("?")[0]!;
    const described = this.describedResponse(method, path, response.status);
    if (typeof described === "string") return [`${response.method} ${path} -> ${response.status}: ${described}`];
    const breaches: string[] = [];
    const definition = resolve(this.document, { $ref: `#/${described.pointer}` });

    const media = definition.content?.["application/json"];
    // HTTP gives a HEAD answer no body; its status and headers are still checked.
    if (media && method !== "head") {
      if (!response.contentType?.startsWith("application/json")) breaches.push(`content-type is ${response.contentType}, not application/json`);
      const validate = this.validator(`${described.pointer}/content/${pointer("application/json")}/schema`);
      if (!validate(response.body)) breaches.push(describeErrors(validate.errors, "body"));
    } else if (response.body !== undefined) {
      breaches.push("a body where the document describes none");
    }

    // The one rule between body and headers the schemas cannot state (docs/contract.md, Error envelope: request_id).
    const requestId = (response.body as Json | undefined)?.error?.request_id;
    if (response.status >= 400 && requestId !== undefined && requestId !== response.headers["x-request-id"]) {
      breaches.push(`error.request_id ${requestId} differs from X-Request-Id ${response.headers["x-request-id"]}`);
    }

    for (const [name, headerRef] of Object.entries<Json>(definition.headers ?? {})) {
      const header = resolve(this.document, headerRef);
      const value = response.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required) breaches.push(`header ${name} is missing`);
        continue;
      }
      const validate = this.headerValidator(name, header.schema);
      if (!validate({ [name]: value })) breaches.push(describeErrors(validate.errors, "header "));
    }
    return breaches.map((breach) => `${response.method} ${described.template} -> ${response.status}: ${breach}`);
  }

  /** Every way a webhook delivery, as a receiver got it, departs from the document's `webhooks.event`. */
  webhookDeliveryBreaches(delivery: { headers: Record<string, string | string[] | undefined>; body: unknown }): string[] {
    const post = this.document.webhooks.event.post;
    const breaches: string[] = [];
    const validate = this.validator(pointer("webhooks", "event", "post", "requestBody", "content", "application/json", "schema"));
    if (!validate(delivery.body)) breaches.push(describeErrors(validate.errors, "body"));
    for (const parameter of post.parameters as Json[]) {
      const value = delivery.headers[parameter.name.toLowerCase()];
      if (value === undefined) {
        if (parameter.required) breaches.push(`header ${parameter.name} is missing`);
        continue;
      }
      const check = this.headerValidator(parameter.name, parameter.schema);
      if (!check({ [parameter.name]: value })) breaches.push(describeErrors(check.errors, "header "));
    }
    return breaches;
  }

  /** The breaches of every /v1 response; identical ones are listed once, with a count and an example path. */
  breachesOfAll(responses: readonly RecordedResponse[]): string[] {
    const seen = new Map<string, { count: number; example: string }>();
    for (const response of responses) {
      if (!isPublicApiPath(response.path)) continue;
      for (const breach of this.breachesOf(response)) {
        const entry = seen.get(breach) ?? { count: 0, example: response.path };
        entry.count++;
        seen.set(breach, entry);
      }
    }
    return [...seen].map(([breach, { count, example }]) => `${breach}  [${count}x, e.g. ${example}]`);
  }
}
