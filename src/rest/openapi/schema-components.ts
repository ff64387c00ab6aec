// The document's named schemas: a schema given a name where it is defined (`named`, in representations/) is written
// once under components.schemas and referred to by $ref wherever it occurs; every other schema is written in place.
import { type JsonSchema, nameOf } from "../../representations/json-schema.ts";

export class SchemaComponents {
  /** The named schemas met so far, by name. */
  readonly schemas: Record<string, JsonSchema> = {};
  private readonly definitions = new Map<string, object>();

  /** `value` as the document writes it: plain JSON, each named schema in it a $ref. */
  write(value: unknown): unknown {
    return this.copy(value, null);
  }

  /** `component` is the named schema being written under its own name, which is not a reference to itself. */
  private copy(value: unknown, component: object | null): unknown {
    if (Array.isArray(value)) return value.map((item) => this.copy(item, null));
    if (value === null || typeof value !== "object") return value;
    const name = value === component ? undefined : nameOf(value);
    if (name !== undefined) return this.refer(name, value);
    return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, this.copy(child, null)]));
  }

  private refer(name: string, schema: object): JsonSchema {
    const known = this.definitions.get(name);
    if (known === undefined) {
      // Registered before it is written, so a schema that contains itself refers to itself.
      this.definitions.set(name, schema);
      this.schemas[name] = this.copy(schema, schema) as JsonSchema;
    } else if (known !== schema) {
      throw new Error(`two different schemas are named ${name}`);
    }
    return { $ref: `#/components/schemas/${name}` };
  }
}
