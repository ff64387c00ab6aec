// The User, Profile, Wallet and signup config objects, field for field as docs/contract.md, Resources, lists them.
import type { Profile, SignupConfig, User, Wallet } from "../../gen/svc/v1/users_pb.ts";
import { PROFILE_FIELD_NAMES } from "../domain/signup-flow.ts";
import { isoTime, orNull, requiredIsoTime } from "./json-values.ts";
import { walletBalanceJson } from "./transactions.ts";

export interface UserJson {
  id: string;
  object: "user";
  phone: string;
  external_id: string | null;
  verified: boolean;
  kyc_status: string;
  suspended: boolean;
  livemode: boolean;
  wallet_status: string;
  created_at: string;
  last_login_at: string | null;
}

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

export function profileJson(profile: Profile | undefined): Record<string, unknown> | null {
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
export function userWithProfileJson(user: User, profile: Profile | undefined): UserJson & { profile: unknown } {
  return { ...userJson(user), profile: profileJson(profile) };
}

export function walletJson(wallet: Wallet): Record<string, unknown> {
  return {
    id: wallet.id,
    object: "wallet",
    user_id: wallet.userId,
    status: wallet.status,
    simulated: wallet.simulated,
    currency: "usd",
    balance: walletBalanceJson(wallet.balance),
    livemode: wallet.livemode,
    created_at: requiredIsoTime(wallet.createdAt),
    updated_at: requiredIsoTime(wallet.updatedAt ?? wallet.createdAt),
  };
}

export function signupConfigJson(config: SignupConfig): Record<string, unknown> {
  const modules: Record<string, { enabled: boolean; required: boolean }> = {};
  for (const name of PROFILE_FIELD_NAMES) {
    const module = config.modules[name];
    modules[name] = { enabled: module?.enabled ?? false, required: module?.required ?? false };
  }
  return {
    object: "signup_config",
    published: config.published,
    modules,
    min_age: orNull(config.minAge),
    allowed_countries: [...config.allowedCountries],
    updated_at: isoTime(config.updatedAt),
  };
}
