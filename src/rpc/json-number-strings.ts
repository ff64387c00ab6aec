// Numbers given as strings in JSON request messages (Connect, gRPC-Web and gRPC with the JSON codec, on both
// servers): the proto3 JSON mapping lets a numeric field come as a string, and protobuf-es reads that string with
// Number() or BigInt(), which also take "0x10" (16), "0b11" (3), "0o7" (7) and, for 64-bit integers, " 5". The
// reference implementations take only a decimal literal (src/domain/decimal.ts), and so does Svc: anything else is
// validation_error (Connect code InvalidArgument) naming the dotted field, before protobuf-es reads the message.
// Float and double fields also take "NaN", "Infinity" and "-Infinity" (the methods refuse them where they are not
// wanted); integer fields take a literal only when its value is whole ("1e2", "100.0"), and get it as plain digits.
//
// Why a TextDecoder: connect-es has no public hook on a request's raw JSON; interceptors see the message once
// protobuf-es has read it. Every JSON request message, whatever the protocol, server or HTTP verb (POST bodies,
// Connect GET's `message` parameter, enveloped gRPC and gRPC-Web messages), goes through connect-es's JSON
// serialization, which turns the bytes into text with the `textDecoder` of the handler's `jsonOptions` (an option
// of that serialization the handler passes on, though the handler's option type does not declare it) and then
// calls protobuf-es's fromJsonString. One decoder per method checks the text against the method's input schema
// there (connect-routes.ts registers each method with its own), so nothing of connect-es is patched.
import { fromJsonString, ScalarType, type DescMessage } from "@bufbuild/protobuf";
import { StructSchema } from "@bufbuild/protobuf/wkt";
import { isDecimalLiteral, isIntegral, parseDecimalLiteral, roundHalfAwayFromZero } from "../domain/decimal.ts";
import { validationError } from "../domain/errors.ts";
import { connectErrorOf } from "../pipeline/connect-errors.ts";

export interface JsonTextDecoder {
  decode(data: Uint8Array): string;
}

/** Deeper than protobuf-es's own recursion limit: it refuses such a message before any field matters. */
const MAX_DEPTH = 100;
const FLOAT_SPECIALS = new Set(["NaN", "Infinity", "-Infinity"]);
const WRAPPERS = new Set([
  "google.protobuf.DoubleValue",
  "google.protobuf.FloatValue",
  "google.protobuf.Int64Value",
  "google.protobuf.UInt64Value",
  "google.protobuf.Int32Value",
  "google.protobuf.UInt32Value",
]);

/**
 * The text decoder of one method's JSON requests: UTF-8 as connect-es decodes it, then the numbers given as
 * strings checked against `schema`. Text that is not JSON is answered as is, for protobuf-es to refuse.
 */
export function numberCheckingTextDecoder(schema: DescMessage): JsonTextDecoder {
  const utf8 = new TextDecoder();
  if (!carriesNumbers(schema)) return utf8;
  return {
    decode(data) {
      const text = utf8.decode(data);
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        return text;
      }
      try {
        if (!checkMessage(schema, json, "", 0)) return text;
      } catch (error) {
        // Thrown inside Connect's codec, before any interceptor: it must already be in Connect's form.
        throw connectErrorOf(error);
      }
      // An integer was written otherwise than as plain digits: protobuf-es gets them. JSON.parse has dropped
      // duplicate keys, which protobuf-es refuses; a text that has any keeps its own form for that refusal.
      return hasDuplicateKeys(text) ? text : JSON.stringify(json);
    },
  };
}

/**
 * Whether protobuf-es would find a duplicate key, by its own check (it reads a Struct from any JSON object); run
 * only when a text is to be rewritten. Any other failure also keeps the text as sent, for protobuf-es to judge.
 */
function hasDuplicateKeys(text: string): boolean {
  try {
    fromJsonString(StructSchema, text);
    return false;
  } catch {
    return true;
  }
}

/** Whether a message can hold a numeric field at any depth (else its text needs no second parse). */
function carriesNumbers(schema: DescMessage, seen = new Set<DescMessage>()): boolean {
  if (WRAPPERS.has(schema.typeName)) return true;
  if (seen.has(schema) || schema.typeName.startsWith("google.protobuf.")) return false;
  seen.add(schema);
  return schema.fields.some((field) => {
    switch (field.fieldKind) {
      case "scalar":
        return isNumeric(field.scalar);
      case "message":
        return carriesNumbers(field.message, seen);
      case "list":
        if (field.listKind === "scalar") return isNumeric(field.scalar);
        return field.listKind === "message" && carriesNumbers(field.message, seen);
      case "map":
        if (isNumeric(field.mapKey)) return true;
        if (field.mapKind === "scalar") return isNumeric(field.scalar);
        return field.mapKind === "message" && carriesNumbers(field.message, seen);
      default:
        return false;
    }
  });
}

function isNumeric(scalar: ScalarType): boolean {
  return scalar !== ScalarType.STRING && scalar !== ScalarType.BYTES && scalar !== ScalarType.BOOL;
}

function isFloating(scalar: ScalarType): boolean {
  return scalar === ScalarType.DOUBLE || scalar === ScalarType.FLOAT;
}

type Container = Record<string, unknown> | unknown[];

/** Checks the members of a message's JSON object; answers whether an integer was rewritten. */
function checkMessage(schema: DescMessage, json: unknown, prefix: string, depth: number): boolean {
  // What is no object is protobuf-es's to refuse, as are unknown keys.
  if (depth > MAX_DEPTH || typeof json !== "object" || json === null || Array.isArray(json)) return false;
  const object = json as Record<string, unknown>;
  let rewritten = false;
  for (const field of schema.fields) {
    for (const key of field.name === field.jsonName ? [field.name] : [field.name, field.jsonName]) {
      if (!Object.hasOwn(object, key) || object[key] === null) continue;
      const param = prefix + field.name;
      const value = object[key];
      switch (field.fieldKind) {
        case "scalar":
          rewritten = checkScalar(object, key, field.scalar, param) || rewritten;
          break;
        case "message":
          rewritten = checkMessageAt(object, key, field.message, param, depth + 1) || rewritten;
          break;
        case "list":
          if (!Array.isArray(value)) break;
          for (let i = 0; i < value.length; i++) {
            const item = `${param}[${i}]`;
            if (field.listKind === "scalar") rewritten = checkScalar(value, i, field.scalar, item) || rewritten;
            else if (field.listKind === "message") rewritten = checkMessageAt(value, i, field.message, item, depth + 1) || rewritten;
          }
          break;
        case "map": {
          if (typeof value !== "object" || Array.isArray(value)) break;
          const map = value as Record<string, unknown>;
          for (const entry of Object.keys(map)) {
            const item = `${param}.${entry}`;
            if (field.mapKind === "scalar") rewritten = checkScalar(map, entry, field.scalar, item) || rewritten;
            else if (field.mapKind === "message") rewritten = checkMessageAt(map, entry, field.message, item, depth + 1) || rewritten;
          }
          if (isNumeric(field.mapKey)) {
            // Integer keys: the same rule as integer values, rewritten as digits in a copy of the map.
            const entries = Object.entries(map);
            const keys = entries.map(([entry]) => integerDigits(entry, `${param}.${entry}`));
            if (keys.some((digits, i) => digits !== entries[i]![0])) {
              object[key] = Object.fromEntries(entries.map(([, v], i) => [keys[i]!, v]));
              rewritten = true;
            }
          }
          break;
        }
        default:
          break; // enums: names or numbers, protobuf-es's to read
      }
    }
  }
  return rewritten;
}

/**
 * A message field's value: a wrapper is its bare scalar. The other well-known types are left to protobuf-es: Struct,
 * Value and ListValue hold free JSON, Timestamp, Duration and FieldMask are strings of their own, and Any needs a
 * type registry the services are not given, so protobuf-es refuses it.
 */
function checkMessageAt(container: Container, key: string | number, schema: DescMessage, param: string, depth: number): boolean {
  if (WRAPPERS.has(schema.typeName)) return checkScalar(container, key, schema.fields[0]!.scalar!, param);
  if (schema.typeName.startsWith("google.protobuf.")) return false;
  return checkMessage(schema, (container as Record<string, unknown>)[key as string], `${param}.`, depth);
}

/** A scalar given as a string must be a decimal literal; answers whether an integer was rewritten as digits. */
function checkScalar(container: Container, key: string | number, scalar: ScalarType, param: string): boolean {
  const value = (container as Record<string, unknown>)[key as string];
  if (typeof value !== "string" || !isNumeric(scalar)) return false;
  if (isFloating(scalar)) {
    if (FLOAT_SPECIALS.has(value)) return false;
    if (!isDecimalLiteral(value)) {
      throw validationError(param, `${param} must be a number: a JSON number, or a string holding a decimal literal such as "12.5".`);
    }
    if (!Number.isFinite(Number(value))) throw validationError(param, `${param} is out of range.`);
    return false;
  }
  const digits = integerDigits(value, param);
  if (digits === value) return false;
  (container as Record<string, unknown>)[key as string] = digits;
  return true;
}

/** An integer given as a string: a decimal literal of a whole value, as plain digits. */
function integerDigits(value: string, param: string): string {
  const decimal = parseDecimalLiteral(value);
  if (!decimal || !isIntegral(decimal)) {
    throw validationError(param, `${param} must be an integer: a JSON number, or a string holding a decimal literal of a whole number such as "12".`);
  }
  // Longer than any 64-bit integer: left as written, for protobuf-es to refuse as out of range.
  return roundHalfAwayFromZero(decimal, 0, 25)?.toString() ?? value;
}
