// The signup flow of a project and environment: which profile modules are collected, which are required,
// and the options min_age and allowed_countries. Built from an admin's publish request; read by the profile rules.
import { isAssignedCountryCode } from "./countries.ts";
import { validationError } from "./errors.ts";

/** The profile fields, each its own signup-flow module, in the order validation reports them. */
export const PROFILE_FIELD_NAMES = [
  "email",
  "first_name",
  "last_name",
  "birth_date",
  "country",
  "referral_code",
  "terms_acceptance",
  "tagname",
] as const;

export type ProfileFieldName = (typeof PROFILE_FIELD_NAMES)[number];

export interface ModuleSetting {
  enabled: boolean;
  required: boolean;
}

export interface SignupFlow {
  published: boolean;
  modules: Record<ProfileFieldName, ModuleSetting>;
  /** Minimum age in whole years at today's UTC date; null: no minimum. */
  minAge: number | null;
  /** Uppercase ISO 3166-1 alpha-2 codes; empty: any assigned code. */
  allowedCountries: string[];
  updatedAt: Date | null;
}

export interface PublishSignupFlowRequest {
  modules: { name: string; enabled: boolean; required: boolean }[];
  minAge?: number;
  allowedCountries: string[];
}

const MIN_AGE_LIMIT = 150;

function modulesAll(setting: ModuleSetting): Record<ProfileFieldName, ModuleSetting> {
  return Object.fromEntries(PROFILE_FIELD_NAMES.map((name) => [name, { ...setting }])) as Record<ProfileFieldName, ModuleSetting>;
}

function deepFreeze(flow: SignupFlow): SignupFlow {
  Object.values(flow.modules).forEach((setting) => Object.freeze(setting));
  Object.freeze(flow.modules);
  Object.freeze(flow.allowedCountries);
  return Object.freeze(flow);
}

/** The flow of a project that never published one: every field accepted, none required. Shared, so frozen. */
export const UNPUBLISHED_SIGNUP_FLOW: SignupFlow = deepFreeze({
  published: false,
  modules: modulesAll({ enabled: true, required: false }),
  minAge: null,
  allowedCountries: [],
  updatedAt: null,
});

export function isProfileFieldName(name: string): name is ProfileFieldName {
  return (PROFILE_FIELD_NAMES as readonly string[]).includes(name);
}

/**
 * Validates an admin's publish request and returns the flow it publishes. Publishing replaces the whole
 * flow, so modules the request does not list are disabled. Errors name the offending entry
 * (`modules[2].name`, `min_age`, `allowed_countries[0]`), checked in request order.
 */
export function buildSignupFlow(request: PublishSignupFlowRequest, now: Date): SignupFlow {
  const modules = modulesAll({ enabled: false, required: false });
  const listed = new Set<string>();
  request.modules.forEach((module, index) => {
    const param = `modules[${index}]`;
    if (!isProfileFieldName(module.name)) {
      throw validationError(`${param}.name`, `Unknown signup module '${module.name}'; expected one of: ${PROFILE_FIELD_NAMES.join(", ")}.`);
    }
    if (listed.has(module.name)) {
      throw validationError(`${param}.name`, `The module '${module.name}' is listed more than once.`);
    }
    listed.add(module.name);
    if (module.required && !module.enabled) {
      throw validationError(`${param}.required`, `The module '${module.name}' cannot be required without being enabled.`);
    }
    modules[module.name] = { enabled: module.enabled, required: module.required };
  });

  const minAge = request.minAge ?? null;
  if (minAge !== null && !(Number.isInteger(minAge) && minAge >= 0 && minAge <= MIN_AGE_LIMIT)) {
    throw validationError("min_age", `min_age must be a whole number from 0 to ${MIN_AGE_LIMIT}.`);
  }

  const allowedCountries: string[] = [];
  request.allowedCountries.forEach((code, index) => {
    const param = `allowed_countries[${index}]`;
    if (!isAssignedCountryCode(code)) {
      throw validationError(param, `'${code}' is not an assigned ISO 3166-1 alpha-2 country code.`);
    }
    const upper = code.toUpperCase();
    if (allowedCountries.includes(upper)) {
      throw validationError(param, `The country '${upper}' is listed more than once.`);
    }
    allowedCountries.push(upper);
  });

  return { published: true, modules, minAge, allowedCountries, updatedAt: now };
}
