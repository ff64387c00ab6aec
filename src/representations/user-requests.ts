// The request bodies of the users family: creation and update, with the same limits the services enforce.
import { EXTERNAL_ID_MAX_LENGTH, PHONE_PATTERN } from "../domain/profile-rules.ts";
import { closedObject, named, type Static, type TOptional, type TSchema, Type, type TUnsafe } from "./json-schema.ts";
import { nullableFields, PROFILE_FIELD_INPUTS, TERMS_ACCEPTANCE_EXAMPLE } from "./users.ts";

type OptionalNullableFields<P extends Record<string, TSchema>> = { [K in keyof P]: TOptional<TUnsafe<Static<P[K]> | null>> };

/** Each of `fields`, nullable and optional: null is the same as leaving it out (or, in a PATCH, clears it). */
function optionalNullableFields<P extends Record<string, TSchema>>(fields: P): OptionalNullableFields<P> {
  return Object.fromEntries(
    Object.entries<TSchema>(nullableFields(fields)).map(([name, schema]) => [name, Type.Optional(schema)]),
  ) as OptionalNullableFields<P>;
}

const SIGNUP_FLOW_NOTE =
  "Once a signup flow is published (GET /v1/signup-config), a field of a disabled module is refused (422 validation_error) and every required module must be given.";

export const createUserRequestSchema = closedObject(
  {
    phone: Type.String({ pattern: PHONE_PATTERN.source, description: "E.164." }),
    // null is the same as leaving a field out (docs/contract.md, Input decoding).
    ...optionalNullableFields({ external_id: Type.String({ minLength: 1, maxLength: EXTERNAL_ID_MAX_LENGTH }), ...PROFILE_FIELD_INPUTS }),
  },
  { description: `Unknown fields are refused (422 validation_error); null is the same as leaving a field out. ${SIGNUP_FLOW_NOTE}` },
);
named("CreateUserRequest", createUserRequestSchema, [
  {
    phone: "+14155550123",
    external_id: "cust_4821",
    email: "ada.lovelace@example.com",
    first_name: "Ada",
    last_name: "Lovelace",
    birth_date: "1990-12-10",
    country: "gb",
    terms_acceptance: TERMS_ACCEPTANCE_EXAMPLE,
  },
]);

export const updateUserRequestSchema = closedObject(optionalNullableFields(PROFILE_FIELD_INPUTS), {
  description:
    "Only the fields sent are validated and changed; null clears a field, except a required module of the published flow. " +
    "`phone` and `external_id` cannot be changed (422 validation_error).",
});
named("UpdateUserRequest", updateUserRequestSchema, [{ email: "ada@example.org", tagname: "ada.l", referral_code: null }]);
