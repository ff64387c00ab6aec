// Error responses: for each status an operation can answer the codes it can carry,
// with each code's type taken from the error catalogue.
import { STATUS_CODES } from "node:http";
import { ERROR_CATALOGUE, type ErrorCode } from "../../domain/errors.ts";
import { errorEnvelopeSchema } from "../../representations/error-envelope.ts";
import type { JsonSchema } from "../../representations/json-schema.ts";
import { headersOf } from "./headers-and-parameters.ts";

/** The envelope restricted to `codes`, each paired with its catalogue type. */
function envelopeWith(codes: readonly ErrorCode[]): JsonSchema {
  // Each variant requires what tells it apart, so the oneOf is exclusive to readers of the variant alone (Redocly).
  const variants = codes.map((code) => ({
    required: ["code", "type"],
    properties: { code: { const: code }, type: { const: ERROR_CATALOGUE[code].type } },
  }));
  return {
    allOf: [
      errorEnvelopeSchema,
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
