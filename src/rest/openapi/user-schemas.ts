// Schemas of the users family (docs/contract.md, "User", "Profile", "Wallet", "Signup config" and "Users"):
// the objects answered and the request bodies, with the same patterns and limits the
// services enforce, imported from the rules themselves.
import { USER_ID_PATTERN } from "../../domain/ids.ts";
import {
  BIRTH_DATE_MIN_YEAR,
  BIRTH_DATE_PATTERN,
  COUNTRY_PATTERN,
  EMAIL_MAX_LENGTH,
  EXTERNAL_ID_MAX_LENGTH,
  NAME_MAX_LENGTH,
  PHONE_PATTERN,
  REFERRAL_CODE_PATTERN,
  TAGNAME_PATTERN,
  TERMS_VERSION_MAX_LENGTH,
} from "../../domain/profile-rules.ts";
import { PROFILE_FIELD_NAMES, type ProfileFieldName } from "../../domain/signup-flow.ts";
import { closedObject, DATE_TIME, listOf, nullable, ref, type JsonSchema } from "./json-schema.ts";

const KYC_STATUSES = ["none", "pending", "approved", "rejected"];
const WALLET_STATUSES = ["none", "pending", "ready", "failed"];

const userProperties: Record<string, JsonSchema> = {
  id: { type: "string", pattern: USER_ID_PATTERN.source, description: "Nine digits in practice; paths accept 1 to 9." },
  object: { const: "user" },
  phone: { type: "string", pattern: PHONE_PATTERN.source, description: "E.164. Cannot be changed." },
  external_id: nullable({
    type: "string",
    minLength: 1,
    maxLength: EXTERNAL_ID_MAX_LENGTH,
    description: "Caller's own identifier, unique per project and environment. Cannot be changed.",
  }),
  verified: { type: "boolean", description: "Phone number verified. Always true in sandbox." },
  kyc_status: { type: "string", enum: KYC_STATUSES },
  suspended: { type: "boolean" },
  livemode: { type: "boolean" },
  wallet_status: {
    type: "string",
    enum: WALLET_STATUSES,
    description: "`pending`: creation in progress or being retried (poll GET /v1/users/{id}/wallets); `none`: no wallet is created at this step.",
  },
  created_at: DATE_TIME,
  last_login_at: nullable(DATE_TIME),
};

/**
 * EMAIL_PATTERN with its control characters (\p{Cc}) spelled as the ranges they are, U+0000-U+001F and U+007F-U+009F:
 * validators that compile patterns without Unicode mode (Spectral's) read `\p{Cc}` as the letters p, C, c.
 */
export const EMAIL_SCHEMA_PATTERN = "^[^\\s@\\u0000-\\u001F\\u007F-\\u009F]+@[^\\s@\\u0000-\\u001F\\u007F-\\u009F]+$";

/** What each profile field accepts on input; the same values come back on output (normalised). */
const profileFieldInputs: Record<ProfileFieldName, JsonSchema> = {
  email: { type: "string", maxLength: EMAIL_MAX_LENGTH, pattern: EMAIL_SCHEMA_PATTERN, description: "Lowercased on output." },
  first_name: { type: "string", minLength: 1, maxLength: NAME_MAX_LENGTH },
  last_name: { type: "string", minLength: 1, maxLength: NAME_MAX_LENGTH },
  birth_date: {
    type: "string",
    format: "date",
    pattern: BIRTH_DATE_PATTERN.source,
    description: `A real calendar date from ${BIRTH_DATE_MIN_YEAR}-01-01, not in the future; the published flow's \`min_age\` applies.`,
  },
  country: {
    type: "string",
    pattern: COUNTRY_PATTERN.source,
    description: "An assigned ISO 3166-1 alpha-2 code, any case; uppercased on output. The flow's `allowed_countries` applies.",
  },
  referral_code: { type: "string", pattern: REFERRAL_CODE_PATTERN.source },
  terms_acceptance: ref("TermsAcceptance"),
  tagname: { type: "string", pattern: TAGNAME_PATTERN.source, description: "Unique per project and environment, ignoring case; kept as given." },
};

function profileFields(transform: (schema: JsonSchema) => JsonSchema): Record<string, JsonSchema> {
  return Object.fromEntries(PROFILE_FIELD_NAMES.map((name) => [name, transform(profileFieldInputs[name])]));
}

const SIGNUP_FLOW_NOTE =
  "Once a signup flow is published (GET /v1/signup-config), a field of a disabled module is refused (422 validation_error) and every required module must be given.";

export const userSchemas: Record<string, JsonSchema> = {
  User: closedObject(userProperties, { description: "An end user, as answered by creation, lists and events: never with `profile`." }),
  UserWithProfile: closedObject(
    { ...userProperties, profile: nullable(ref("Profile")) },
    {
      description: "A user with its personal data, answered by GET and PATCH /v1/users/{id} only. `profile` is null until a profile field is stored.",
    },
  ),
  Profile: closedObject({ object: { const: "profile" }, ...profileFields(nullable), updated_at: DATE_TIME }),
  TermsAcceptance: closedObject({
    version: { type: "string", minLength: 1, maxLength: TERMS_VERSION_MAX_LENGTH },
    accepted_at: { ...DATE_TIME, description: "Not in the future." },
  }),
  Wallet: closedObject({
    id: { type: "string" },
    object: { const: "wallet" },
    user_id: { type: "string", pattern: USER_ID_PATTERN.source },
    status: { type: "string", enum: ["pending", "ready", "failed"] },
    simulated: { type: "boolean", description: "true for the simulated wallets of sandbox users." },
    currency: { const: "usd" },
    balance: ref("WalletBalance"),
    livemode: { type: "boolean" },
    created_at: DATE_TIME,
    updated_at: { ...DATE_TIME, description: "The last change of the wallet or its balance." },
  }),
  WalletList: listOf("Wallet", "The wallets of a user."),
  UserList: listOf("User", "Users of the key's project and environment, without profile."),
  SignupModule: closedObject({ enabled: { type: "boolean" }, required: { type: "boolean" } }),
  SignupConfig: closedObject({
    object: { const: "signup_config" },
    published: { type: "boolean", description: "While false, every profile field is optional." },
    modules: closedObject(Object.fromEntries(PROFILE_FIELD_NAMES.map((name) => [name, ref("SignupModule")]))),
    min_age: nullable({ type: "integer", minimum: 0, description: "Whole years at today's UTC date." }),
    allowed_countries: { type: "array", items: { type: "string", pattern: "^[A-Z]{2}$" }, description: "Empty: any assigned code." },
    updated_at: nullable({ ...DATE_TIME, description: "null while unpublished." }),
  }),
  CreateUserRequest: closedObject(
    {
      phone: { type: "string", pattern: PHONE_PATTERN.source, description: "E.164." },
      external_id: nullable({ type: "string", minLength: 1, maxLength: EXTERNAL_ID_MAX_LENGTH }),
      // null is the same as leaving a field out (docs/contract.md, Input decoding).
      ...profileFields(nullable),
    },
    {
      required: ["phone"],
      description: `Unknown fields are refused (422 validation_error); null is the same as leaving a field out. ${SIGNUP_FLOW_NOTE}`,
    },
  ),
  UpdateUserRequest: closedObject(profileFields(nullable), {
    required: [],
    description:
      "Only the fields sent are validated and changed; null clears a field, except a required module of the published flow. " +
      "`phone` and `external_id` cannot be changed (422 validation_error).",
  }),
};
