// Stored users as the public messages.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  ProfileSchema,
  SignupConfigSchema,
  SignupModuleSchema,
  TermsAcceptanceSchema,
  UserSchema,
  WalletSchema,
  type Profile,
  type SignupConfig,
  type User,
  type Wallet,
} from "../../gen/svc/v1/users_pb.ts";
import { PROFILE_FIELD_NAMES, type SignupFlow } from "../domain/signup-flow.ts";
import { userJson, type UserJson } from "../representations/users.ts";
import type { UserDocument } from "../store/user-document.ts";
import { EMPTY_LEDGER, ledgerOf } from "../store/wallet-ledger.ts";
import { walletBalanceMessage } from "./transaction-messages.ts";

export function userMessage(doc: UserDocument): User {
  return create(UserSchema, {
    id: doc._id,
    phone: doc.phone,
    ...(doc.external_id !== null ? { externalId: doc.external_id } : {}),
    verified: doc.verified,
    kycStatus: doc.kyc_status,
    suspended: doc.suspended,
    livemode: doc.livemode,
    walletStatus: doc.wallet_status,
    createdAt: timestampFromDate(doc.created_at),
    ...(doc.last_login_at ? { lastLoginAt: timestampFromDate(doc.last_login_at) } : {}),
  });
}

/** The User as an event carries it in `data.object`: every user field, never the profile. */
export function userEventObject(doc: UserDocument): UserJson {
  return userJson(userMessage(doc));
}

export function profileMessage(doc: UserDocument): Profile | undefined {
  const profile = doc.profile;
  if (!profile) return undefined;
  return create(ProfileSchema, {
    email: profile.email,
    firstName: profile.first_name,
    lastName: profile.last_name,
    birthDate: profile.birth_date,
    country: profile.country,
    referralCode: profile.referral_code,
    ...(profile.terms_acceptance
      ? {
          termsAcceptance: create(TermsAcceptanceSchema, {
            version: profile.terms_acceptance.version,
            acceptedAt: timestampFromDate(profile.terms_acceptance.accepted_at),
          }),
        }
      : {}),
    tagname: profile.tagname,
    updatedAt: timestampFromDate(profile.updated_at),
  });
}

export function walletMessages(doc: UserDocument): Wallet[] {
  const ledger = ledgerOf(doc);
  return doc.wallets.map((wallet, index) =>
    create(WalletSchema, {
      id: wallet.id,
      userId: doc._id,
      status: wallet.status,
      simulated: wallet.simulated,
      livemode: doc.livemode,
      createdAt: timestampFromDate(wallet.created_at),
      currency: "usd",
      // The first wallet holds the user's balance (one wallet per user today).
      balance: walletBalanceMessage(index === 0 ? ledger : EMPTY_LEDGER),
      // The balance changes with every transaction; the wallet record itself only at creation.
      updatedAt: timestampFromDate(index === 0 && ledger.updated_at && ledger.updated_at > wallet.created_at ? ledger.updated_at : wallet.created_at),
    }),
  );
}

export function signupConfigMessage(flow: SignupFlow): SignupConfig {
  return create(SignupConfigSchema, {
    published: flow.published,
    modules: Object.fromEntries(PROFILE_FIELD_NAMES.map((name) => [name, create(SignupModuleSchema, flow.modules[name])])),
    ...(flow.minAge !== null ? { minAge: flow.minAge } : {}),
    allowedCountries: flow.allowedCountries,
    ...(flow.updatedAt ? { updatedAt: timestampFromDate(flow.updatedAt) } : {}),
  });
}
