// The schemas of an OpenAPI document as Ajv reads them (JSON Schema 2020-12, formats checked), each reached by its
// JSON pointer in the document: `paths/.../schema`, `components/schemas/User`.
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

export interface DocumentSchemas {
  ajv: Ajv2020;
  /** The reference of the node at `segments` (each unescaped), for `$ref`. */
  pointer(...segments: string[]): string;
  /** A validator of the schema at `pointer`. */
  validator(pointer: string): ValidateFunction;
}

export function documentSchemas(document: object, id: string): DocumentSchemas {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ ...document, $id: id });
  const escapeSegment = (segment: string) => encodeURIComponent(segment.replace(/~/g, "~0").replace(/\//g, "~1"));
  return {
    ajv,
    pointer: (...segments) => `${id}#/${segments.map(escapeSegment).join("/")}`,
    validator: (pointer) => ajv.compile({ $ref: pointer }),
  };
}

export type { ErrorObject };
