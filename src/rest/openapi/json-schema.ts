// Small builders for the JSON Schema 2020-12 objects of the OpenAPI document, so every schema is written
// the same way: objects closed and fully required unless said otherwise, nullability as a type union.
export type JsonSchema = { [keyword: string]: unknown };

export function ref(name: string): JsonSchema {
  return { $ref: `#/components/schemas/${name}` };
}

export const DATE_TIME: JsonSchema = { type: "string", format: "date-time" };

export interface ObjectOptions {
  /** Defaults to every property: the service always sends every field, null where unset. */
  required?: string[];
  description?: string;
}

/** A closed object: a property the document does not name is a contract break. */
export function closedObject(properties: Record<string, JsonSchema>, options: ObjectOptions = {}): JsonSchema {
  return {
    type: "object",
    ...(options.description ? { description: options.description } : {}),
    required: options.required ?? Object.keys(properties),
    properties,
    additionalProperties: false,
  };
}

/** `schema` or null, written as a 2020-12 type union where the schema has a simple type. */
export function nullable(schema: JsonSchema): JsonSchema {
  const { type, enum: values, ...rest } = schema;
  if (typeof type === "string") {
    return { ...rest, type: [type, "null"], ...(Array.isArray(values) ? { enum: [...values, null] } : {}) };
  }
  return { anyOf: [schema, { type: "null" }] };
}

/** A pattern matching exactly one of `values`, for codes that also take a parameterised form. */
export function oneOfPattern(values: readonly string[], extra: readonly string[] = []): string {
  const escaped = values.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return `^(${[...extra, ...escaped].join("|")})$`;
}

/** The list shape every list route answers (docs/contract.md, Lists). */
export function listOf(itemSchemaName: string, description: string): JsonSchema {
  return closedObject(
    {
      object: { const: "list" },
      url: { type: "string", description: "The path of this list, without the query string." },
      data: { type: "array", items: ref(itemSchemaName), description: "Newest first." },
      has_more: {
        type: "boolean",
        description: "Whether more items follow the last one of `data`; for a page asked with `ending_before`, whether more precede the first one.",
      },
    },
    { description },
  );
}
