// The input rules of a user's phone, external_id and profile fields (docs/contract.md,
// "Profile rules" and "Signup flow"). Pure: the caller supplies the project's signup flow and the clock.
// Every failure is a 422 validation_error naming the field; with several wrong fields the first in the order
// phone, external_id, then PROFILE_FIELD_NAMES is reported, so a client always sees the same error.
import { isAssignedCountryCode } from "./countries.ts";
import { isCalendarDate } from "./date-time.ts";
import { validationError } from "./errors.ts";
import { PROFILE_FIELD_NAMES, type ProfileFieldName, type SignupFlow } from "./signup-flow.ts";
import { codePointLength } from "./text.ts";

export interface TermsAcceptanceInput {
  version: string;
  /** null: the client did not send it (the transport parses the date-time). */
  accepted_at: Date | null;
}

/**
 * Profile fields as received. An absent (undefined) key was not sent; null asks to clear the field on update
 * and counts as not sent on create.
 */
export interface ProfileInput {
  email?: string | null;
  first_name?: string | null;
  last_name?: string | null;
  birth_date?: string | null;
  country?: string | null;
  referral_code?: string | null;
  terms_acceptance?: TermsAcceptanceInput | null;
  tagname?: string | null;
}

export interface TermsAcceptance {
  version: string;
  accepted_at: Date;
}

/** The normalised value stored for each profile field. */
export interface ProfileFieldValues {
  /** Lowercased. */
  email: string;
  first_name: string;
  last_name: string;
  /** `YYYY-MM-DD`. */
  birth_date: string;
  /** Uppercased. */
  country: string;
  referral_code: string;
  terms_acceptance: TermsAcceptance;
  /** As given; uniqueness is checked on tagnameKey(). */
  tagname: string;
}

/** The values to store: only the fields sent; null clears a field (update only). */
export type ProfileValues = { [K in ProfileFieldName]?: ProfileFieldValues[K] | null };

export const PHONE_PATTERN = /^\+[1-9]\d{6,14}$/;
export const EXTERNAL_ID_MAX_LENGTH = 128;
export const EMAIL_MAX_LENGTH = 254;
export const NAME_MAX_LENGTH = 100;
export const TERMS_VERSION_MAX_LENGTH = 64;
export const BIRTH_DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
/** No one living was born earlier: an older birth date is a typo or a placeholder such as 0000-01-01. */
export const BIRTH_DATE_MIN_YEAR = 1900;
export const COUNTRY_PATTERN = /^[A-Za-z]{2}$/;
export const REFERRAL_CODE_PATTERN = /^[A-Za-z0-9_-]{3,32}$/;
export const TAGNAME_PATTERN = /^[A-Za-z0-9_.-]{3,30}$/;
// Deliberately loose, since real addresses are far more varied than any strict grammar admits: exactly one
// "@" with a non-empty local part and domain, no whitespace or control characters. A dot-free domain
// (user@localhost) is accepted; deliverability is the sender's concern.
export const EMAIL_PATTERN = /^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+$/u;

function requireString(param: string, value: unknown): string {
  if (typeof value !== "string") throw validationError(param, `${param} must be a string.`);
  return value;
}

/** The key tagname uniqueness is decided on: tagnames are unique per project and environment ignoring case. */
export function tagnameKey(tagname: string): string {
  return tagname.toLowerCase();
}

/** E.164 phone number; returned as given. An empty string is a missing phone. */
export function validatePhone(phone: string): string {
  if (requireString("phone", phone) === "") throw validationError("phone", "phone is required.");
  if (!PHONE_PATTERN.test(phone)) {
    throw validationError("phone", "phone must be an E.164 number: '+' then 7 to 15 digits, the first not 0.");
  }
  return phone;
}

/** The caller's own identifier, 1 to 128 characters; returned as given. */
export function validateExternalId(value: string): string {
  const length = codePointLength(requireString("external_id", value));
  if (length < 1 || length > EXTERNAL_ID_MAX_LENGTH) {
    throw validationError("external_id", `external_id must be 1 to ${EXTERNAL_ID_MAX_LENGTH} characters.`);
  }
  return value;
}

function validateEmail(value: string): string {
  requireString("email", value);
  if (codePointLength(value) > EMAIL_MAX_LENGTH) {
    throw validationError("email", `email must be at most ${EMAIL_MAX_LENGTH} characters.`);
  }
  if (!EMAIL_PATTERN.test(value)) {
    throw validationError("email", "email must be an address of the form local@domain, without spaces.");
  }
  return value.toLowerCase();
}

function validateName(field: "first_name" | "last_name", value: string): string {
  const length = codePointLength(requireString(field, value));
  if (length < 1 || length > NAME_MAX_LENGTH) {
    throw validationError(field, `${field} must be 1 to ${NAME_MAX_LENGTH} characters.`);
  }
  return value;
}

/** Age in whole years on `now`'s UTC date; someone born on 29 February comes of age on 1 March in common years. */
function ageOn(birthDate: string, now: Date): number {
  const [birthYear, birthMonth, birthDay] = birthDate.split("-").map(Number) as [number, number, number];
  const [year, month, day] = [now.getUTCFullYear(), now.getUTCMonth() + 1, now.getUTCDate()];
  const hadBirthdayThisYear = month > birthMonth || (month === birthMonth && day >= birthDay);
  return year - birthYear - (hadBirthdayThisYear ? 0 : 1);
}

function validateBirthDate(value: string, flow: SignupFlow, now: Date): string {
  if (!BIRTH_DATE_PATTERN.test(requireString("birth_date", value))) {
    throw validationError("birth_date", "birth_date must be a date in the form YYYY-MM-DD.");
  }
  if (!isCalendarDate(value)) {
    throw validationError("birth_date", `birth_date '${value}' is not a real calendar date.`);
  }
  if (Number(value.slice(0, 4)) < BIRTH_DATE_MIN_YEAR) {
    throw validationError("birth_date", `birth_date must be ${BIRTH_DATE_MIN_YEAR}-01-01 or later.`);
  }
  const today = now.toISOString().slice(0, 10);
  if (value > today) throw validationError("birth_date", "birth_date cannot be in the future.");
  if (flow.minAge !== null && ageOn(value, now) < flow.minAge) {
    throw validationError("birth_date", `The user must be at least ${flow.minAge} years old.`);
  }
  return value;
}

function validateCountry(value: string, flow: SignupFlow): string {
  if (!COUNTRY_PATTERN.test(requireString("country", value))) {
    throw validationError("country", "country must be a two-letter ISO 3166-1 alpha-2 code.");
  }
  const country = value.toUpperCase();
  if (!isAssignedCountryCode(country)) {
    throw validationError("country", `country '${country}' is not an assigned ISO 3166-1 alpha-2 code.`);
  }
  if (flow.allowedCountries.length > 0 && !flow.allowedCountries.includes(country)) {
    throw validationError("country", `country '${country}' is not accepted by this project; accepted: ${flow.allowedCountries.join(", ")}.`);
  }
  return country;
}

function validateReferralCode(value: string): string {
  if (!REFERRAL_CODE_PATTERN.test(requireString("referral_code", value))) {
    throw validationError("referral_code", "referral_code must be 3 to 32 letters, digits, '_' or '-'.");
  }
  return value;
}

function validateTermsAcceptance(value: TermsAcceptanceInput, now: Date): TermsAcceptance {
  if (typeof value !== "object") {
    throw validationError("terms_acceptance", "terms_acceptance must be an object with version and accepted_at.");
  }
  const version = requireString("terms_acceptance.version", value.version);
  const versionLength = codePointLength(version);
  // Empty and missing are one case (proto3 cannot tell them apart): the message states the rule for both.
  if (versionLength === 0 || versionLength > TERMS_VERSION_MAX_LENGTH) {
    throw validationError("terms_acceptance.version", `terms_acceptance.version must be 1 to ${TERMS_VERSION_MAX_LENGTH} characters.`);
  }
  const acceptedAt = value.accepted_at;
  if (acceptedAt === null || acceptedAt === undefined) {
    throw validationError("terms_acceptance.accepted_at", "terms_acceptance.accepted_at is required.");
  }
  if (!(acceptedAt instanceof Date) || Number.isNaN(acceptedAt.getTime())) {
    throw validationError("terms_acceptance.accepted_at", "terms_acceptance.accepted_at must be an RFC 3339 date-time.");
  }
  if (acceptedAt.getTime() > now.getTime()) {
    throw validationError("terms_acceptance.accepted_at", "terms_acceptance.accepted_at cannot be in the future.");
  }
  return { version, accepted_at: new Date(acceptedAt.getTime()) };
}

function validateTagname(value: string): string {
  if (!TAGNAME_PATTERN.test(requireString("tagname", value))) {
    throw validationError("tagname", "tagname must be 3 to 30 letters, digits, '_', '.' or '-'.");
  }
  return value;
}

type FieldValidators = {
  [K in ProfileFieldName]: (value: NonNullable<ProfileInput[K]>, flow: SignupFlow, now: Date) => ProfileFieldValues[K];
};

const FIELD_VALIDATORS: FieldValidators = {
  email: (value) => validateEmail(value),
  first_name: (value) => validateName("first_name", value),
  last_name: (value) => validateName("last_name", value),
  birth_date: (value, flow, now) => validateBirthDate(value, flow, now),
  country: (value, flow) => validateCountry(value, flow),
  referral_code: (value) => validateReferralCode(value),
  terms_acceptance: (value, _flow, now) => validateTermsAcceptance(value, now),
  tagname: (value) => validateTagname(value),
};

type Mode = "create" | "update";

/** Applies the signup-flow rules and the field's own rules to one field, recording its value when sent. */
function applyField<K extends ProfileFieldName>(field: K, input: ProfileInput, values: ProfileValues, flow: SignupFlow, now: Date, mode: Mode): void {
  const value: ProfileInput[K] = input[field];
  const module = flow.modules[field];
  if (flow.published && value !== undefined && !module.enabled) {
    throw validationError(field, `${field} is not collected by this project's signup flow.`);
  }
  const required = flow.published && module.required;
  if (value === undefined || value === null) {
    if (mode === "create" && required) {
      throw validationError(field, `${field} is required by this project's signup flow.`);
    }
    if (mode === "update" && value === null) {
      if (required) {
        throw validationError(field, `${field} is required by this project's signup flow and cannot be cleared.`);
      }
      values[field] = null;
    }
    return;
  }
  values[field] = FIELD_VALIDATORS[field](value as NonNullable<ProfileInput[K]>, flow, now);
}

function validateProfile(input: ProfileInput, flow: SignupFlow, now: Date, mode: Mode): ProfileValues {
  const values: ProfileValues = {};
  for (const field of PROFILE_FIELD_NAMES) applyField(field, input, values, flow, now, mode);
  return values;
}

/**
 * The profile fields of a new user. Fields absent or null are not stored; with a published flow every
 * required module must be sent non-null and no disabled module may be sent at all.
 * Validate phone and external_id first (or use validateNewUser) to keep the reporting order.
 */
export function validateNewUserProfile(input: ProfileInput, flow: SignupFlow, now: Date): ProfileValues {
  return validateProfile(input, flow, now, "create");
}

/**
 * The changes of a profile update: only the fields sent are validated and returned; null clears a field
 * unless its module is required by the published flow.
 */
export function validateProfileUpdate(changes: ProfileInput, flow: SignupFlow, now: Date): ProfileValues {
  return validateProfile(changes, flow, now, "update");
}

export interface NewUserInput extends ProfileInput {
  phone: string;
  /** Absent or null: none. */
  external_id?: string | null;
}

export interface NewUserValues {
  phone: string;
  external_id: string | null;
  profile: ProfileValues;
}

/** A whole creation request, checked in the reporting order: phone, external_id, then the profile fields. */
export function validateNewUser(input: NewUserInput, flow: SignupFlow, now: Date): NewUserValues {
  const phone = validatePhone(input.phone);
  const externalId = input.external_id === undefined || input.external_id === null ? null : validateExternalId(input.external_id);
  const { phone: _phone, external_id: _externalId, ...profile } = input;
  return { phone, external_id: externalId, profile: validateNewUserProfile(profile, flow, now) };
}
