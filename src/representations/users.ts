// The User and Profile objects (docs/contract.md, Resources): their schemas, examples and presenters.
import type { Profile, User } from "../../gen/svc/v1/users_pb.ts";
import { USER_ID_PATTERN } from "../domain/ids.ts";
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
} from "../domain/profile-rules.ts";
import type { ProfileFieldName } from "../domain/signup-flow.ts";
import { CREATED_AT, UPDATED_AT, USER_ID } from "./example-values.ts";
import {
  closedObject,
  constant,
  dateTime,
  exampleList,
  listOf,
  named,
  nullable,
  type Static,
  stringEnum,
  type TSchema,
  Type,
  type TUnsafe,
} from "./json-schema.ts";
import { isoTime, orNull, requiredIsoTime } from "./json-values.ts";

export const KYC_STATUSES = ["none", "pending", "approved", "rejected"];
const WALLET_STATUSES = ["none", "pending", "ready", "failed"];

const userProperties = {
  id: Type.String({ pattern: USER_ID_PATTERN.source, description: "Nine digits in practice; paths accept 1 to 9." }),
  object: constant("user"),
  phone: Type.String({ pattern: PHONE_PATTERN.source, description: "E.164. Cannot be changed." }),
  external_id: nullable(
    Type.String({
      minLength: 1,
      maxLength: EXTERNAL_ID_MAX_LENGTH,
      description: "Caller's own identifier, unique per project and environment. Cannot be changed.",
    }),
  ),
  verified: Type.Boolean({ description: "Phone number verified. Always true in sandbox." }),
  kyc_status: stringEnum(KYC_STATUSES),
  suspended: Type.Boolean(),
  livemode: Type.Boolean(),
  wallet_status: stringEnum(WALLET_STATUSES, {
    description: "`pending`: creation in progress or being retried (poll GET /v1/users/{id}/wallets); `none`: no wallet is created at this step.",
  }),
  created_at: dateTime(),
  last_login_at: nullable(dateTime()),
};

export const userSchema = closedObject(userProperties, {
  description: "An end user, as answered by creation, lists and events: never with `profile`.",
});
export type UserJson = Static<typeof userSchema>;

export const USER_EXAMPLE: UserJson = {
  id: USER_ID,
  object: "user",
  phone: "+14155550123",
  external_id: "cust_4821",
  verified: true,
  kyc_status: "approved",
  suspended: false,
  livemode: false,
  wallet_status: "ready",
  created_at: CREATED_AT,
  last_login_at: null,
};
named("User", userSchema, [USER_EXAMPLE]);

export const userListSchema = listOf(userSchema, "Users of the key's project and environment, without profile.");
named("UserList", userListSchema, [exampleList("/v1/users", [USER_EXAMPLE])]);

export const termsAcceptanceSchema = closedObject({
  version: Type.String({ minLength: 1, maxLength: TERMS_VERSION_MAX_LENGTH }),
  accepted_at: dateTime("Not in the future."),
});
export const TERMS_ACCEPTANCE_EXAMPLE: Static<typeof termsAcceptanceSchema> = { version: "2026-09", accepted_at: "2026-11-20T09:13:58.000Z" };
named("TermsAcceptance", termsAcceptanceSchema, [TERMS_ACCEPTANCE_EXAMPLE]);

/**
 * EMAIL_PATTERN with its control characters (\p{Cc}) spelled as the ranges they are, U+0000-U+001F and U+007F-U+009F:
 * validators that compile patterns without Unicode mode (Spectral's) read `\p{Cc}` as the letters p, C, c.
 */
export const EMAIL_SCHEMA_PATTERN = "^[^\\s@\\u0000-\\u001F\\u007F-\\u009F]+@[^\\s@\\u0000-\\u001F\\u007F-\\u009F]+$";

/** What each profile field accepts on input; the same values come back on output (normalised). */
export const PROFILE_FIELD_INPUTS = {
  email: Type.String({ maxLength: EMAIL_MAX_LENGTH, pattern: EMAIL_SCHEMA_PATTERN, description: "Lowercased on output." }),
  first_name: Type.String({ minLength: 1, maxLength: NAME_MAX_LENGTH }),
  last_name: Type.String({ minLength: 1, maxLength: NAME_MAX_LENGTH }),
  birth_date: Type.String({
    format: "date",
    pattern: BIRTH_DATE_PATTERN.source,
    description: `A real calendar date from ${BIRTH_DATE_MIN_YEAR}-01-01, not in the future; the published flow's \`min_age\` applies.`,
  }),
  country: Type.String({
    pattern: COUNTRY_PATTERN.source,
    description: "An assigned ISO 3166-1 alpha-2 code, any case; uppercased on output. The flow's `allowed_countries` applies.",
  }),
  referral_code: Type.String({ pattern: REFERRAL_CODE_PATTERN.source }),
  terms_acceptance: termsAcceptanceSchema,
  tagname: Type.String({ pattern: TAGNAME_PATTERN.source, description: "Unique per project and environment, ignoring case; kept as given." }),
} satisfies Record<ProfileFieldName, TSchema>;

export type NullableFields<P extends Record<string, TSchema>> = { [K in keyof P]: TUnsafe<Static<P[K]> | null> };

/** Each of `fields`, nullable. */
export function nullableFields<P extends Record<string, TSchema>>(fields: P): NullableFields<P> {
  return Object.fromEntries(Object.entries(fields).map(([name, schema]) => [name, nullable(schema)])) as NullableFields<P>;
}

export const profileSchema = closedObject({ object: constant("profile"), ...nullableFields(PROFILE_FIELD_INPUTS), updated_at: dateTime() });

const PROFILE_EXAMPLE: Static<typeof profileSchema> = {
  object: "profile",
  email: "ada.lovelace@example.com",
  first_name: "Ada",
  last_name: "Lovelace",
  birth_date: "1990-12-10",
  country: "GB",
  referral_code: "FRIEND-2026",
  terms_acceptance: TERMS_ACCEPTANCE_EXAMPLE,
  tagname: "ada.l",
  updated_at: UPDATED_AT,
};
named("Profile", profileSchema, [PROFILE_EXAMPLE]);

export const userWithProfileSchema = closedObject(
  { ...userProperties, profile: nullable(profileSchema) },
  {
    description: "A user with its personal data, answered by GET and PATCH /v1/users/{id} only. `profile` is null until a profile field is stored.",
  },
);
named("UserWithProfile", userWithProfileSchema, [{ ...USER_EXAMPLE, profile: PROFILE_EXAMPLE }]);

export function userJson(user: User): UserJson {
  return {
    id: user.id,
    object: "user",
    phone: user.phone,
    external_id: orNull(user.externalId),
    verified: user.verified,
    kyc_status: user.kycStatus,
    suspended: user.suspended,
    livemode: user.livemode,
    wallet_status: user.walletStatus,
    created_at: requiredIsoTime(user.createdAt),
    last_login_at: isoTime(user.lastLoginAt),
  };
}

export function profileJson(profile: Profile | undefined): Static<typeof profileSchema> | null {
  if (!profile) return null;
  return {
    object: "profile",
    email: orNull(profile.email),
    first_name: orNull(profile.firstName),
    last_name: orNull(profile.lastName),
    birth_date: orNull(profile.birthDate),
    country: orNull(profile.country),
    referral_code: orNull(profile.referralCode),
    terms_acceptance: profile.termsAcceptance
      ? { version: profile.termsAcceptance.version, accepted_at: requiredIsoTime(profile.termsAcceptance.acceptedAt) }
      : null,
    tagname: orNull(profile.tagname),
    updated_at: requiredIsoTime(profile.updatedAt),
  };
}

/** GET and PATCH answer the user with its profile; nothing else carries the profile. */
export function userWithProfileJson(user: User, profile: Profile | undefined): Static<typeof userWithProfileSchema> {
  return { ...userJson(user), profile: profileJson(profile) };
}
