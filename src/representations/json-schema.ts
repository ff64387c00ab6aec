// Builders of the JSON Schema 2020-12 objects that define the contract's JSON, typed with TypeBox so that
// `Static<typeof schema>` is the TypeScript type of what a presenter returns: a presenter that drifts from its
// schema does not compile. Objects are closed and fully required unless `Type.Optional` says otherwise; a nullable
// scalar is a type union. Enumerations type as plain strings: proto carries them as strings, the enum is the wire's rule.
import {
  type Static,
  type TArray,
  type TBoolean,
  type TObject,
  type TProperties,
  type TSchema,
  type TString,
  Type,
  type TUnsafe,
} from "@sinclair/typebox";
import { type JsonList, jsonList } from "./json-values.ts";

export { type Static, type TOptional, type TProperties, type TSchema, Type, type TUnsafe } from "@sinclair/typebox";

/** A schema built by hand, to be read as JSON: a node of the OpenAPI document. */
export type JsonSchema = { [keyword: string]: unknown };

/** A date-time string; `description` where the field needs one. */
export function dateTime(description?: string): TUnsafe<string> {
  return Type.Unsafe<string>({ type: "string", format: "date-time", ...(description ? { description } : {}) });
}

export interface ObjectOptions {
  description?: string;
  /** Further rules of the whole object (JSON Schema `allOf`, `if`/`then`/`else`), by a discriminating field. */
  allOf?: JsonSchema[];
  if?: JsonSchema;
  then?: JsonSchema;
  else?: JsonSchema;
}

/** A closed object: a property the schema does not name is a contract break. `Type.Optional` marks what may be left out. */
export function closedObject<P extends TProperties>(properties: P, options: ObjectOptions = {}): TObject<P> {
  // Options after the shape, so the document reads `type`, `required` and `properties` first.
  return Object.assign(Type.Object(properties), { additionalProperties: false }, options);
}

/**
 * `schema` or null: a 2020-12 type union where the schema is of a scalar type, else `anyOf` with the schema itself,
 * so an object keeps its identity (a named one is still referred to by name).
 */
export function nullable<S extends TSchema>(schema: S): TUnsafe<Static<S> | null> {
  const { type, enum: values, ...rest }: JsonSchema = { ...schema };
  if (typeof type === "string" && type !== "object" && type !== "array") {
    return Type.Unsafe<Static<S> | null>({ ...rest, type: [type, "null"], ...(Array.isArray(values) ? { enum: [...values, null] } : {}) });
  }
  return Type.Unsafe<Static<S> | null>({ anyOf: [schema, { type: "null" }] });
}

/** Exactly `value`. */
export function constant<const V extends string | boolean>(value: V): TUnsafe<V> {
  return Type.Unsafe<V>({ const: value });
}

/** One of `values`; the field is typed string, as the proto field that fills it. */
export function stringEnum(values: readonly string[], options: JsonSchema = {}): TUnsafe<string> {
  return Type.Unsafe<string>({ type: "string", enum: [...values], ...options });
}

/** A pattern matching exactly one of `values`, for codes that also take a parameterised form. */
export function oneOfPattern(values: readonly string[], extra: readonly string[] = []): string {
  const escaped = values.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return `^(${[...extra, ...escaped].join("|")})$`;
}

export type ListSchema<S extends TSchema> = TObject<{
  object: TUnsafe<"list">;
  url: TString;
  data: TArray<S>;
  has_more: TBoolean;
}>;

/** The list shape every list route answers (docs/contract.md, Lists). */
export function listOf<S extends TSchema>(item: S, description: string): ListSchema<S> {
  return closedObject(
    {
      object: constant("list"),
      url: Type.String({ description: "The path of this list, without the query string." }),
      data: Type.Array(item, { description: "Newest first." }),
      has_more: Type.Boolean({
        description: "Whether more items follow the last one of `data`; for a page asked with `ending_before`, whether more precede the first one.",
      }),
    },
    { description },
  );
}

/** The example of a list of `data` at `url`: one page, nothing more. */
export function exampleList<T>(url: string, data: T[]): JsonList<T> {
  return jsonList(url, data, false);
}

const names = new WeakMap<object, string>();

/**
 * Gives `schema` its name in the OpenAPI document (`components.schemas`) and its examples, each a value of its
 * type. The document refers to a named schema wherever it appears (by identity: a copy is not the same schema).
 */
export function named<S extends TSchema>(name: string, schema: S, examples: readonly Static<S>[]): void {
  if (names.has(schema)) throw new Error(`a schema is named twice: ${names.get(schema)} and ${name}`);
  names.set(schema, name);
  Object.assign(schema, { examples: [...examples] });
}

/** The name `named` gave `schema`; undefined for a schema without one. */
export function nameOf(schema: object): string | undefined {
  return names.get(schema);
}
