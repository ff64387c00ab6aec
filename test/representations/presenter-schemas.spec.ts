// Every presenter against its schema at run time, beside the compile-time check (a presenter returns the
// `Static` type of its schema): each public method's presenter, and those of webhook bodies, `kyc.*` event
// objects and the error envelope, run over a message with every field set, must return no field its schema lacks.
import { type DescField, type DescMessage, type DescEnum, ScalarType } from "@bufbuild/protobuf";
import { reflect, type ReflectMessage } from "@bufbuild/protobuf/reflect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { expect } from "chai";
import { EventSchema } from "../../gen/svc/v1/events_pb.ts";
import { UserSchema } from "../../gen/svc/v1/users_pb.ts";
import { PUBLIC_API } from "../../src/api/public-api.ts";
import { describeError, validationError } from "../../src/domain/errors.ts";
import { errorEnvelope } from "../../src/representations/error-envelope.ts";
import { webhookBodyOf } from "../../src/representations/events.ts";
import { kycJson } from "../../src/representations/kyc-sessions.ts";
import { userJson } from "../../src/representations/users.ts";
import { buildOpenApiDocument } from "../../src/rest/openapi/document.ts";
import { documentSchemas, type ErrorObject } from "../support/document-schemas.ts";

const { pointer, validator } = documentSchemas(buildOpenApiDocument(PUBLIC_API), "urn:svc:presenter-schemas");

/** The fields `value` has that the schema at `schemaPointer` does not name, as `path/field`. */
function fieldsTheSchemaLacks(schemaPointer: string, value: unknown): string[] {
  const validate = validator(schemaPointer);
  validate(value);
  return ((validate.errors ?? []) as ErrorObject[])
    .filter((error) => error.keyword === "additionalProperties")
    .map((error) => `${error.instancePath}/${error.params.additionalProperty}`);
}

const TIME = timestampFromDate(new Date("2026-11-20T09:14:03.512Z"));

function scalarValue(field: DescField & { scalar: ScalarType; longAsString: boolean }): unknown {
  switch (field.scalar) {
    case ScalarType.STRING:
      // A field of JSON text (an event's `data_json`) holds JSON.
      return field.name.endsWith("_json") ? "{}" : "text";
    case ScalarType.BOOL:
      return true;
    case ScalarType.BYTES:
      return new Uint8Array([1]);
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return 1.5;
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return field.longAsString ? "1" : 1n;
    default:
      return 1;
  }
}

const enumValue = (desc: DescEnum) => (desc.values[1] ?? desc.values[0]!).number;

/** One item of a list or map field, of its kind. */
function itemValue(field: DescField, kind: "scalar" | "enum" | "message", depth: number): unknown {
  if (kind === "message") return everyFieldSet(field.message!, depth + 1);
  return kind === "enum" ? enumValue(field.enum!) : scalarValue(field as never);
}

/** A message of `desc` with every field set (the first member of each oneof), nested messages too. */
function everyFieldSet(desc: DescMessage, depth = 0): ReflectMessage {
  if (desc.typeName === "google.protobuf.Timestamp") return reflect(desc, TIME as never);
  const message = reflect(desc);
  // Struct and the other well-known types stay empty: `data` objects are not the presenters' shape.
  if (depth > 5 || desc.typeName.startsWith("google.protobuf.")) return message;
  for (const field of desc.fields) {
    if (field.oneof && field !== field.oneof.fields[0]) continue;
    switch (field.fieldKind) {
      case "scalar":
        message.set(field, scalarValue(field) as never);
        break;
      case "enum":
        message.set(field, enumValue(field.enum) as never);
        break;
      case "message":
        message.set(field, everyFieldSet(field.message, depth + 1) as never);
        break;
      case "list":
        message.get(field).add(itemValue(field, field.listKind, depth) as never);
        break;
      case "map":
        message.get(field).set("key" as never, itemValue(field, field.mapKind, depth) as never);
        break;
    }
  }
  return message;
}

describe("presenters against their schemas", () => {
  it("answers no field the success schema lacks, for every public method", () => {
    const lacking: string[] = [];
    for (const described of PUBLIC_API) {
      const { route, status } = described;
      const response = everyFieldSet(described.method.output).message;
      const answer = described.present(response, "/v1/presented");
      const at = pointer(
        "paths",
        route.pathTemplate,
        route.httpMethod.toLowerCase(),
        "responses",
        String(status),
        "content",
        "application/json",
        "schema",
      );
      lacking.push(...fieldsTheSchemaLacks(at, answer).map((field) => `${route.httpMethod} ${route.pathTemplate}: ${field}`));
    }
    expect(lacking).to.deep.equal([]);
    expect(PUBLIC_API.length).to.be.greaterThan(30);
  });

  it("answers no field the schema lacks, for the webhook body, the kyc event object and the error envelope", () => {
    const event = everyFieldSet(EventSchema).message as never;
    const schema = (name: string) => pointer("components", "schemas", name);
    expect(fieldsTheSchemaLacks(schema("WebhookEvent"), JSON.parse(webhookBodyOf(event, "5b1e7c2a-9d44-4f3b-8a6e-2c0f1d9e7b35")))).to.deep.equal([]);
    expect(fieldsTheSchemaLacks(schema("Kyc"), kycJson("104729361", "approved", false))).to.deep.equal([]);
    const refusal = describeError(validationError("phone", "phone is required."));
    expect(fieldsTheSchemaLacks(schema("Error"), errorEnvelope(refusal, "req_8fK2nQ7xVb3L"))).to.deep.equal([]);
  });

  it("names the field a drifting presenter adds", () => {
    const user = userJson(everyFieldSet(UserSchema).message as never);
    expect(fieldsTheSchemaLacks(pointer("components", "schemas", "User"), user)).to.deep.equal([]);
    expect(fieldsTheSchemaLacks(pointer("components", "schemas", "User"), { ...user, reference: "order-42" })).to.deep.equal(["/reference"]);
  });
});
