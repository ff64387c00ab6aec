// Error responses: the error envelope, and for each status an operation can answer the codes it can carry,
// with each code's type taken from the error catalogue.
import { STATUS_CODES } from "node:http";
import { ERROR_CATALOGUE, type ErrorCode } from "../../domain/errors.ts";
import { headersOf } from "./headers-and-parameters.ts";
import { closedObject, ref, type JsonSchema } from "./json-schema.ts";

/**
 * Codes whose envelope names the offending parameter in `param`; no other code carries it. The user duplicates
 * name the value that is taken (`phone` or `external_id`; `tagname`).
 */
const CODES_WITH_PARAM: ErrorCode[] = ["validation_error", "invalid_webhook_url", "user_already_exists", "tagname_already_taken"];

const ERROR_TYPES = [...new Set(Object.values(ERROR_CATALOGUE).map((definition) => definition.type))];

export const errorSchemas: Record<string, JsonSchema> = {
  Error: {
    ...closedObject({
      error: {
        ...closedObject(
          {
            type: { type: "string", enum: ERROR_TYPES, description: "The family: what the client should do." },
            code: { type: "string", pattern: "^[a-z][a-z0-9_]*$", description: "Stable machine code; clients branch on it." },
            message: { type: "string", description: "Human-readable English; may change; never parse it." },
            param: {
              type: "string",
              description:
                "The offending parameter (validation errors, and the taken field of user_already_exists and tagname_already_taken); nested ones are dotted.",
            },
            request_id: { type: "string", pattern: "^req_[A-Za-z0-9]+$", description: "Equals the X-Request-Id header." },
          },
          { required: ["type", "code", "message", "request_id"] },
        ),
        if: { properties: { code: { enum: CODES_WITH_PARAM } } },
        then: { required: ["param"] },
        else: { not: { required: ["param"] } },
      },
    }),
    description: "The envelope of every error response.",
  },
};

/** The envelope restricted to `codes`, each paired with its catalogue type. */
function envelopeWith(codes: readonly ErrorCode[]): JsonSchema {
  // Each variant requires what tells it apart, so the oneOf is exclusive to readers of the variant alone (Redocly).
  const variants = codes.map((code) => ({
    required: ["code", "type"],
    properties: { code: { const: code }, type: { const: ERROR_CATALOGUE[code].type } },
  }));
  return {
    allOf: [
      ref("Error"),
      // One code is stated directly: a one-item oneOf says the same and reads worse in every tool.
      { properties: { error: variants.length === 1 ? variants[0] : { oneOf: variants } } },
    ],
  };
}

export function errorResponse(status: number, codes: readonly ErrorCode[], replayable: boolean): JsonSchema {
  return {
    description: `${STATUS_CODES[status] ?? "Error"}: ${codes.join(", ")}.`,
    headers: headersOf(status, replayable),
    content: { "application/json": { schema: envelopeWith(codes) } },
  };
}

/** Codes grouped by the status the catalogue gives them, statuses ascending. */
export function errorResponses(codes: Iterable<ErrorCode>, isReplayable: (status: number) => boolean): Record<string, JsonSchema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = ERROR_CATALOGUE[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].sort(([a], [b]) => a - b).map(([status, group]) => [String(status), errorResponse(status, group, isReplayable(status))]),
  );
}
