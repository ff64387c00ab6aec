// The signup config object (docs/contract.md, Resources): which profile modules creation takes and requires.
import type { SignupConfig } from "../../gen/svc/v1/users_pb.ts";
import { PROFILE_FIELD_NAMES, type ProfileFieldName } from "../domain/signup-flow.ts";
import { closedObject, constant, dateTime, named, nullable, type Static, Type } from "./json-schema.ts";
import { isoTime, orNull } from "./json-values.ts";

export const signupModuleSchema = closedObject({ enabled: Type.Boolean(), required: Type.Boolean() });
type SignupModuleJson = Static<typeof signupModuleSchema>;
const REQUIRED_MODULE: SignupModuleJson = { enabled: true, required: true };
named("SignupModule", signupModuleSchema, [REQUIRED_MODULE]);

/** One value per profile field, in the order of PROFILE_FIELD_NAMES. */
function perProfileField<T>(value: (name: ProfileFieldName) => T): Record<ProfileFieldName, T> {
  return Object.fromEntries(PROFILE_FIELD_NAMES.map((name) => [name, value(name)])) as Record<ProfileFieldName, T>;
}

export const signupConfigSchema = closedObject({
  object: constant("signup_config"),
  published: Type.Boolean({ description: "While false, every profile field is optional." }),
  modules: closedObject(perProfileField(() => signupModuleSchema)),
  min_age: nullable(Type.Integer({ minimum: 0, description: "Whole years at today's UTC date." })),
  allowed_countries: Type.Array(Type.String({ pattern: "^[A-Z]{2}$" }), { description: "Empty: any assigned code." }),
  updated_at: nullable(dateTime("null while unpublished.")),
});
named("SignupConfig", signupConfigSchema, [
  {
    object: "signup_config",
    published: true,
    modules: {
      ...perProfileField(() => REQUIRED_MODULE),
      referral_code: { enabled: true, required: false },
      tagname: { enabled: false, required: false },
    },
    min_age: 18,
    allowed_countries: ["GB", "US", "FR"],
    updated_at: "2026-11-02T16:00:00.000Z",
  },
]);

export function signupConfigJson(config: SignupConfig): Static<typeof signupConfigSchema> {
  return {
    object: "signup_config",
    published: config.published,
    modules: perProfileField((name) => {
      const module = config.modules[name];
      return { enabled: module?.enabled ?? false, required: module?.required ?? false };
    }),
    min_age: orNull(config.minAge),
    allowed_countries: [...config.allowedCountries],
    updated_at: isoTime(config.updatedAt),
  };
}
