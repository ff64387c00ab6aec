// The error envelope (docs/contract.md, Error envelope): `{ error: { type, code, message, param?, request_id } }`,
// its schema, example and presenter.
import { type DescribedError, ERROR_CATALOGUE, type ErrorCode } from "../domain/errors.ts";
import { closedObject, named, type Static, stringEnum, Type } from "./json-schema.ts";

/**
 * Codes whose envelope names the offending parameter in `param`; no other code carries it. The user duplicates
 * name the value that is taken (`phone` or `external_id`; `tagname`).
 */
const CODES_WITH_PARAM: ErrorCode[] = ["validation_error", "invalid_webhook_url", "user_already_exists", "tagname_already_taken"];

const ERROR_TYPES = [...new Set(Object.values(ERROR_CATALOGUE).map((definition) => definition.type))];

export const errorEnvelopeSchema = closedObject(
  {
    error: closedObject(
      {
        type: stringEnum(ERROR_TYPES, { description: "The family: what the client should do." }),
        code: Type.String({ pattern: "^[a-z][a-z0-9_]*$", description: "Stable machine code; clients branch on it." }),
        message: Type.String({ description: "Human-readable English; may change; never parse it." }),
        param: Type.Optional(
          Type.String({
            description:
              "The offending parameter (validation errors, and the taken field of user_already_exists and tagname_already_taken); nested ones are dotted.",
          }),
        ),
        request_id: Type.String({ pattern: "^req_[A-Za-z0-9]+$", description: "Equals the X-Request-Id header." }),
      },
      { if: { properties: { code: { enum: CODES_WITH_PARAM } } }, then: { required: ["param"] }, else: { not: { required: ["param"] } } },
    ),
  },
  { description: "The envelope of every error response." },
);
export type ErrorEnvelope = Static<typeof errorEnvelopeSchema>;
named("Error", errorEnvelopeSchema, [
  {
    error: {
      type: "invalid_request_error",
      code: "validation_error",
      message: "phone must be an E.164 number: '+' then 7 to 15 digits, the first not 0.",
      param: "phone",
      request_id: "req_8fK2nQ7xVb3L",
    },
  },
]);

export function errorEnvelope(described: DescribedError, requestId: string): ErrorEnvelope {
  return {
    error: {
      type: described.definition.type,
      code: described.code,
      message: described.message,
      ...(described.param !== undefined ? { param: described.param } : {}),
      request_id: requestId,
    },
  };
}
