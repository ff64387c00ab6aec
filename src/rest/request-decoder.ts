// Turns a REST call (path parameters, query string, JSON body) into the method's request message, checking
// JSON types on the way: an unknown field or a wrong type is a 422 `validation_error` naming the parameter.
// Value rules (patterns, lengths, ranges) live in the services, so gRPC callers get them too.
import { create, ScalarType, type DescField, type DescMessage, type Message } from "@bufbuild/protobuf";
import { FieldMaskSchema, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { validationError } from "../domain/errors.ts";
import { parseDateTime } from "../domain/date-time.ts";
import { checkText } from "../domain/text.ts";
import type { NullMeaning } from "../api/method-description.ts";
import type { RestRoute } from "../api/rest-route-table.ts";

export interface RestInput {
  params: Record<string, string>;
  query: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (already known to be an object), or undefined when there is none. */
  body: Record<string, unknown> | undefined;
}

type Init = Record<string, unknown>;

const fieldsByName = new WeakMap<DescMessage, Map<string, DescField>>();

function fieldNamed(message: DescMessage, name: string): DescField | undefined {
  let fields = fieldsByName.get(message);
  if (!fields) {
    fields = new Map(message.fields.map((f) => [f.name, f]));
    fieldsByName.set(message, fields);
  }
  return fields.get(name);
}

function scalarTypeName(scalar: ScalarType): string {
  switch (scalar) {
    case ScalarType.BOOL:
      return "a boolean";
    case ScalarType.STRING:
      return "a string";
    case ScalarType.DOUBLE:
      return "a number";
    default:
      return "an integer";
  }
}

/**
 * The list of a message field that holds only a list of scalars (a list with presence, such as EventTypeList):
 * JSON writes such a field as the bare list.
 */
function wrappedList(field: DescField): (DescField & { fieldKind: "list" }) | undefined {
  if (field.fieldKind !== "message" || field.message.fields.length !== 1) return undefined;
  const [inner] = field.message.fields;
  return inner?.fieldKind === "list" && inner.listKind === "scalar" ? inner : undefined;
}

function typeName(field: DescField): string {
  if (field.fieldKind === "list" || wrappedList(field)) return "an array";
  if (field.fieldKind === "message") {
    if (field.message.typeName === "google.protobuf.Timestamp") return "an RFC 3339 date-time string";
    return "an object";
  }
  if (field.fieldKind === "scalar") return scalarTypeName(field.scalar);
  return "a value";
}

function wrongType(param: string, field: DescField): never {
  throw validationError(param, `${param} must be ${typeName(field)}.`);
}

/** A scalar, or one element of a scalar list: the message names the element's type, not the list's. */
function decodeScalar(field: DescField & { scalar: ScalarType }, value: unknown, param: string): unknown {
  const wrongScalar = (): never => {
    throw validationError(param, `${param} must be ${scalarTypeName(field.scalar)}.`);
  };
  switch (field.scalar) {
    case ScalarType.STRING:
      if (typeof value !== "string") wrongScalar();
      // NUL, control characters (but in free text) and lone surrogates are refused in every string field.
      return checkText(param, value as string, field.name);
    case ScalarType.BOOL:
      if (typeof value !== "boolean") wrongScalar();
      return value;
    case ScalarType.DOUBLE:
      // Amounts in dollars; their rules (decimals, range) are the method's.
      if (typeof value !== "number" || !Number.isFinite(value)) wrongScalar();
      return value;
    case ScalarType.INT32:
      if (typeof value !== "number" || !Number.isInteger(value) || value < -(2 ** 31) || value >= 2 ** 31) {
        wrongScalar();
      }
      return value;
    default:
      throw new Error(`request field ${param}: scalar type ${field.scalar} is not mapped`);
  }
}

/** The field a body member fills, given the members renamed in the route; undefined for no field. */
function memberField(message: DescMessage, key: string, renamed: Readonly<Record<string, string>>): DescField | undefined {
  if (Object.hasOwn(renamed, key)) return fieldNamed(message, renamed[key]!);
  // A renamed field answers only to its member name.
  if (Object.values(renamed).includes(key)) return undefined;
  return fieldNamed(message, key);
}

/** The fields of a `*` body no member fills: the path parameters and the fields only RPC clients give. */
function restSkipped(route: RestRoute): readonly string[] {
  return route.rpcOnlyFields ? [...route.pathParams, ...route.rpcOnlyFields] : route.pathParams;
}

/**
 * The members a route's body takes (what its OpenAPI request schema must list): the fields of the body message
 * under their member names, without path parameters and the update mask.
 */
export function bodyMembers(route: RestRoute): string[] {
  if (route.body === "") return [];
  const message = route.body === "*" ? route.method.input : fieldNamed(route.method.input, route.body)!.message!;
  const renamed = route.renamedMembers ?? {};
  const byField = new Map(Object.entries(renamed).map(([member, field]) => [field, member]));
  return message.fields
    .filter((f) => !restSkipped(route).includes(f.name) && f.message?.typeName !== "google.protobuf.FieldMask")
    .flatMap((f) => {
      const member = byField.get(f.name);
      if (member !== undefined) return [member];
      return Object.hasOwn(renamed, f.name) ? [] : [f.name];
    });
}

/**
 * The fields of `json` as a message init, and the keys sent. With `unknownToMask` (a PATCH body, whose keys become
 * the update mask) a key that is no field is not refused here but listed with the others: the method refuses it as
 * it refuses the same mask path over gRPC (`phone cannot be changed.`, `Unknown parameter: nickname.`).
 */
function decodeObject(
  message: DescMessage,
  json: Record<string, unknown>,
  prefix: string,
  nullMeans: NullMeaning,
  skip: readonly string[] = [],
  refuseEmptyLists = false,
  unknownToMask = false,
  renamed: Readonly<Record<string, string>> = {},
): { init: Init; present: string[] } {
  const init: Init = {};
  const present: string[] = [];
  for (const [key, value] of Object.entries(json)) {
    const param = prefix + key;
    const field = skip.includes(key) ? undefined : memberField(message, key, renamed);
    if (!field || field.message?.typeName === "google.protobuf.FieldMask") {
      if (unknownToMask) {
        present.push(key);
        continue;
      }
      throw validationError(param, `Unknown parameter: ${param}.`);
    }
    present.push(key);
    if (refuseEmptyLists && field.fieldKind === "list" && Array.isArray(value) && value.length === 0) {
      // A repeated field cannot carry an empty list apart from a missing one, and missing means the default. (A
      // list with presence carries it: the method judges an empty one.)
      throw validationError(param, `${param} must not be empty; leave it out for the default.`);
    }
    if (value === null) {
      if (nullMeans === "invalid") wrongType(param, field);
      continue; // absent, or cleared through the field mask
    }
    init[field.localName] = decodeValue(field, value, param);
  }
  return { init, present };
}

function decodeValue(field: DescField, value: unknown, param: string): unknown {
  switch (field.fieldKind) {
    case "scalar":
      return decodeScalar(field, value, param);
    case "list": {
      if (!Array.isArray(value)) wrongType(param, field);
      if (field.listKind !== "scalar") throw new Error(`request field ${param}: only scalar lists are mapped`);
      return value.map((item, i) => decodeScalar(field as never, item, `${param}[${i}]`));
    }
    case "message": {
      const list = wrappedList(field);
      if (list) {
        if (!Array.isArray(value)) wrongType(param, field);
        return create(field.message, { [list.localName]: decodeValue(list, value, param) } as never);
      }
      const typeName = field.message.typeName;
      if (typeName === "google.protobuf.Timestamp") {
        const date = typeof value === "string" ? parseDateTime(value) : null;
        if (!date) wrongType(param, field);
        return timestampFromDate(date);
      }
      if (typeof value !== "object" || value === null || Array.isArray(value)) wrongType(param, field);
      // protobuf-es represents Struct fields as plain JSON objects.
      if (typeName === "google.protobuf.Struct") return value;
      // Inside a nested object, null is the same as leaving the member out.
      return create(field.message, decodeObject(field.message, value as Record<string, unknown>, `${param}.`, "absent").init as never);
    }
    default:
      throw new Error(`request field ${param}: ${field.fieldKind} fields are not mapped`);
  }
}

/**
 * A time in a query string (`created[gt]`): unix seconds, as Stripe's clients send them, or an RFC 3339
 * date-time with an offset, as every answer writes times.
 */
function decodeQueryTime(raw: string, param: string): unknown {
  const date = /^\d{1,11}$/.test(raw) ? new Date(Number(raw) * 1000) : parseDateTime(raw);
  if (!date || Number.isNaN(date.getTime())) {
    throw validationError(param, `${param} must be unix seconds or an RFC 3339 date-time with an offset.`);
  }
  return timestampFromDate(date);
}

function decodeQueryValue(field: DescField, raw: string | string[], param: string): unknown {
  if (Array.isArray(raw)) throw validationError(param, `${param} may be given once.`);
  if (field.fieldKind === "message" && field.message.typeName === "google.protobuf.Timestamp") return decodeQueryTime(raw, param);
  if (field.fieldKind !== "scalar") throw validationError(param, `Unknown parameter: ${param}.`);
  switch (field.scalar) {
    case ScalarType.STRING:
      return checkText(param, raw, field.name);
    case ScalarType.BOOL:
      if (raw !== "true" && raw !== "false") wrongType(param, field);
      return raw === "true";
    default:
      if (!/^-?\d{1,10}$/.test(raw)) wrongType(param, field);
      return decodeScalar(field, Number(raw), param);
  }
}

/** A query parameter naming a member of a message field: `created[gt]`. */
const QUERY_MEMBER = /^([a-z_][a-z0-9_]*)\[([a-z_][a-z0-9_]*)\]$/;

export function decodeRestRequest(route: RestRoute, input: RestInput, nullMeans: NullMeaning): Message {
  const schema = route.method.input;
  const init: Init = {};
  for (const name of route.pathParams) {
    init[fieldNamed(schema, name)!.localName] = input.params[name] ?? "";
  }
  if (route.body === "") {
    const nested: Record<string, Init> = {};
    for (const [key, raw] of Object.entries(input.query)) {
      if (raw === undefined) continue;
      // `created[gt]=...`: the member `gt` of the message field `created` (no deeper nesting).
      const member = QUERY_MEMBER.exec(key);
      const field = route.pathParams.includes(member?.[1] ?? key) ? undefined : fieldNamed(schema, member?.[1] ?? key);
      if (member) {
        const inner = field?.fieldKind === "message" ? fieldNamed(field.message, member[2]!) : undefined;
        if (!field || !inner) throw validationError(key, `Unknown parameter: ${key}.`);
        (nested[field.localName] ??= {})[inner.localName] = decodeQueryValue(inner, raw, key);
        continue;
      }
      if (!field) throw validationError(key, `Unknown parameter: ${key}.`);
      if (field.fieldKind === "message" && field.message.typeName !== "google.protobuf.Timestamp") {
        const members = field.message.fields.map((f) => `${key}[${f.name}]`).join(", ");
        throw validationError(key, `${key} is given as its members: ${members}.`);
      }
      init[field.localName] = decodeQueryValue(field, raw, key);
    }
    for (const [localName, members] of Object.entries(nested)) {
      const field = schema.fields.find((f) => f.localName === localName)!;
      init[localName] = create(field.message!, members as never);
    }
    return create(schema, init as never);
  }
  // A route with a body takes no query parameter: any is unknown, as on the other routes.
  const stray = Object.keys(input.query).find((name) => input.query[name] !== undefined);
  if (stray !== undefined) throw validationError(stray, `Unknown parameter: ${stray}.`);
  if (route.body === "*") {
    Object.assign(init, decodeObject(schema, input.body ?? {}, "", nullMeans, restSkipped(route), true, false, route.renamedMembers).init);
  } else {
    // A PATCH body: the keys sent become the update mask (AIP-134), so null can clear a field.
    const bodyField = fieldNamed(schema, route.body)!;
    const { init: fields, present } = decodeObject(bodyField.message!, input.body ?? {}, "", nullMeans, [], false, true);
    init[bodyField.localName] = create(bodyField.message!, fields as never);
    init.updateMask = create(FieldMaskSchema, { paths: present });
  }
  return create(schema, init as never);
}
