// svc.v1.UsersService: create, retrieve and update users of the caller's project and environment.
import { create } from "@bufbuild/protobuf";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  CreateUserResponseSchema,
  GetSignupConfigResponseSchema,
  GetUserResponseSchema,
  ListUserWalletsResponseSchema,
  ListUsersResponseSchema,
  UpdateUserResponseSchema,
  type CreateUserRequest,
  type GetUserRequest,
  type ListUserWalletsRequest,
  type ListUsersRequest,
  type ProfileFields,
  type TermsAcceptance,
  type UpdateUserRequest,
  type UsersService,
} from "../../gen/svc/v1/users_pb.ts";
import type { Clock } from "../domain/clock.ts";
import { svcError, validationError } from "../domain/errors.ts";
import { newUserId, newWalletId, USER_ID_PATTERN } from "../domain/ids.ts";
import { validateNewUser, validateProfileUpdate, tagnameKey, type ProfileInput, type ProfileValues } from "../domain/profile-rules.ts";
import { PROFILE_FIELD_NAMES, isProfileFieldName, type ProfileFieldName } from "../domain/signup-flow.ts";
import { CHANGED, compareAndSet } from "../lib/compare-and-set.ts";
import { UniqueConflict } from "../store/unique-conflict.ts";
import type { StoredProfile, UserDocument } from "../store/user-document.ts";
import type { UserRepository } from "../store/user-repository.ts";
import type { WalletProvisioner } from "../wallets/wallet-provisioner.ts";
import type { EventRelay } from "../events/event-relay.ts";
import { listParameters, listWindow, pageInMemory } from "./pagination.ts";
import { KYC_STATUSES, type KycStatus } from "../domain/kyc.ts";
import { reservationOf } from "../access/creation-reservation.ts";
import { tenantOf } from "../access/principal.ts";
import { reservedUserId } from "../domain/reserved-ids.ts";
import type { TenantScope } from "../domain/tenant-scope.ts";
import type { TenantSettings } from "./tenant-settings.ts";
import { profileMessage, signupConfigMessage, userMessage, walletMessages } from "../messages/user-messages.ts";
import { userEvent, type UserEventType } from "../events/event-factory.ts";

export interface UsersServiceDependencies {
  users: UserRepository;
  settings: TenantSettings;
  relay: EventRelay;
  wallets: WalletProvisioner;
  clock: Clock;
  /** Relay failures after the user is safely stored: the sweeper will finish them. */
  onBackgroundError: (error: unknown) => void;
}

/** The profile fields of a message: CreateUserRequest and ProfileFields share their names. */
type ProfileFieldsOf = Omit<ProfileFields, "$typeName" | "$unknown">;

/** The JSON keys of profile fields, as proto field local names. */
const LOCAL_NAMES: Record<ProfileFieldName, keyof ProfileFieldsOf> = {
  email: "email",
  first_name: "firstName",
  last_name: "lastName",
  birth_date: "birthDate",
  country: "country",
  referral_code: "referralCode",
  terms_acceptance: "termsAcceptance",
  tagname: "tagname",
};

function termsInput(terms: TermsAcceptance): ProfileInput["terms_acceptance"] {
  return { version: terms.version, accepted_at: terms.acceptedAt ? timestampDate(terms.acceptedAt as Timestamp) : null };
}

/** The profile fields set on a message (CreateUserRequest or ProfileFields share the names). */
function profileInputOf(fields: ProfileFieldsOf, only?: readonly ProfileFieldName[]): ProfileInput {
  const input: Record<string, unknown> = {};
  for (const name of only ?? PROFILE_FIELD_NAMES) {
    const value = fields[LOCAL_NAMES[name]];
    if (value === undefined) {
      if (only) input[name] = null; // in the update mask but unset: clear it
      continue;
    }
    input[name] = name === "terms_acceptance" ? termsInput(value as TermsAcceptance) : value;
  }
  return input as ProfileInput;
}

/** Applies validated values to a stored profile; null clears. Answers null while nothing was ever stored. */
function applyProfile(current: StoredProfile | null, values: ProfileValues, now: Date): StoredProfile | null {
  const next: Record<string, unknown> = { ...current };
  let stores = current !== null;
  for (const [name, value] of Object.entries(values)) {
    if (value === null) delete next[name];
    else {
      next[name] = value;
      stores = true;
    }
  }
  return stores ? ({ ...next, updated_at: now } as StoredProfile) : null;
}

/** Ids drawn again after one is found taken (about one chance in 900 million per existing user). */
const MAX_ID_DRAWS = 5;

/**
 * A new user with its `user.created` event in its own outbox: the event is written in the same document write as
 * the user, so it cannot be lost, nor exist without its user.
 */
function withCreatedEvent(user: UserDocument): UserDocument {
  return { ...user, outbox: [userEvent("user.created", user, user.created_at)] };
}

/** The error a taken unique value answers; an id drawn twice is no client's error (null). */
function conflictOf(error: unknown): Error | null {
  if (!(error instanceof UniqueConflict)) return null;
  // The taken value is named in `param`, so a client can tell a phone from an external_id collision.
  if (error.field === "tagname") return svcError("tagname_already_taken", undefined, { param: "tagname" });
  if (error.field === "phone" || error.field === "external_id") {
    return svcError("user_already_exists", `A user with this ${error.field} already exists in the project.`, { param: error.field });
  }
  return null;
}

export class UsersServiceImpl implements ServiceImpl<typeof UsersService> {
  constructor(private readonly deps: UsersServiceDependencies) {}

  async createUser(request: CreateUserRequest, context: HandlerContext) {
    const scope = tenantOf(context);
    const now = this.deps.clock();
    const flow = await this.deps.settings.signupFlow(scope);
    const values = validateNewUser(
      { phone: request.phone, ...(request.externalId !== undefined ? { external_id: request.externalId } : {}), ...profileInputOf(request) },
      flow,
      now,
    );
    const reservation = reservationOf(context);
    if (reservation?.resumed) {
      // The first run of this request died after claiming its key: answer what it created, if it got that far.
      const earlier = await this.findEarlierCreation(scope, reservation.seed, values.phone);
      if (earlier) {
        await this.deps.relay.relayUserOutbox(earlier).catch(this.deps.onBackgroundError);
        return create(CreateUserResponseSchema, { user: userMessage(earlier) });
      }
    }
    const idFor = (attempt: number) => (reservation ? reservedUserId(reservation.seed, attempt) : newUserId());
    const liveWallets = scope.livemode ? ((await this.deps.settings.project(scope.projectId))?.live_wallets_enabled ?? false) : false;
    const profile = applyProfile(null, values.profile, now);
    let user: UserDocument = withCreatedEvent({
      _id: idFor(0),
      project_id: scope.projectId,
      livemode: scope.livemode,
      phone: values.phone,
      external_id: values.external_id,
      // Sandbox phone numbers count as verified and get a simulated wallet at once.
      verified: !scope.livemode,
      kyc_status: "none",
      suspended: false,
      wallet_status: !scope.livemode ? "ready" : liveWallets ? "pending" : "none",
      wallets: scope.livemode ? [] : [{ id: newWalletId(), status: "ready", simulated: true, created_at: now }],
      created_at: now,
      last_login_at: null,
      profile,
      tagname_key: profile?.tagname !== undefined ? tagnameKey(profile.tagname) : null,
      outbox: [],
      updated_at: now,
    });
    user = await this.insertWithFreshId(user, idFor);
    if (user.wallet_status === "pending") user = await this.recordCreationWallet(user);
    await this.deps.relay.relayUserOutbox(user).catch(this.deps.onBackgroundError);
    return create(CreateUserResponseSchema, { user: userMessage(user) });
  }

  /** Newest first; every filter given must match exactly (tagname ignoring case). Items carry no profile. */
  async listUsers(request: ListUsersRequest, context: HandlerContext) {
    const scope = tenantOf(context);
    const parameters = listParameters(request);
    if (request.kycStatus !== undefined && !(KYC_STATUSES as readonly string[]).includes(request.kycStatus)) {
      throw validationError("kyc_status", `kyc_status must be one of ${KYC_STATUSES.join(", ")}.`);
    }
    const window = await listWindow(parameters, (id) => (USER_ID_PATTERN.test(id) ? this.deps.users.find(scope, id) : Promise.resolve(null)));
    const page = await this.deps.users.list(
      scope,
      {
        external_id: request.externalId,
        phone: request.phone,
        tagname_key: request.tagname !== undefined ? tagnameKey(request.tagname) : undefined,
        kyc_status: request.kycStatus as KycStatus | undefined,
        verified: request.verified,
        suspended: request.suspended,
      },
      window,
    );
    return create(ListUsersResponseSchema, { data: page.items.map(userMessage), hasMore: page.hasMore });
  }

  async getUser(request: GetUserRequest, context: HandlerContext) {
    const user = await this.findUser(context, request.id);
    return create(GetUserResponseSchema, { user: userMessage(user), profile: profileMessage(user) });
  }

  async updateUser(request: UpdateUserRequest, context: HandlerContext) {
    const scope = tenantOf(context);
    const fields: ProfileFieldsOf = request.profile ?? {};
    const paths = request.updateMask?.paths.length
      ? request.updateMask.paths
      : PROFILE_FIELD_NAMES.filter((name) => fields[LOCAL_NAMES[name]] !== undefined);
    for (const path of paths) {
      if (path === "phone" || path === "external_id") throw validationError(path, `${path} cannot be changed.`);
      if (!isProfileFieldName(path)) throw validationError(path, `Unknown parameter: ${path}.`);
    }
    const now = this.deps.clock();
    const values = validateProfileUpdate(profileInputOf(fields, paths as ProfileFieldName[]), await this.deps.settings.signupFlow(scope), now);
    let user = await this.findUser(context, request.id);
    if (paths.length > 0) {
      const found = user;
      // Read, apply, write only if nobody wrote in between: the profile is replaced as a whole.
      const read = (attempt: number) => (attempt === 0 ? found : this.findUser(context, request.id));
      user = await compareAndSet(`profile update of user ${request.id}`, read, async (current) => {
        const profile = applyProfile(current.profile, values, now);
        const tagname = profile?.tagname;
        try {
          const updated = await this.deps.users.update(
            scope,
            current._id,
            { $set: { profile, tagname_key: tagname !== undefined ? tagnameKey(tagname) : null, updated_at: now } },
            { updated_at: current.updated_at },
          );
          return updated ?? CHANGED;
        } catch (error) {
          throw conflictOf(error) ?? error;
        }
      });
    }
    return create(UpdateUserResponseSchema, { user: userMessage(user), profile: profileMessage(user) });
  }

  async listUserWallets(request: ListUserWalletsRequest, context: HandlerContext) {
    const parameters = listParameters(request);
    const user = await this.findUser(context, request.userId);
    // Newest first, like every list.
    const page = pageInMemory(walletMessages(user).reverse(), parameters, (wallet) => timestampDate(wallet.createdAt!));
    return create(ListUserWalletsResponseSchema, { data: page.items, hasMore: page.hasMore });
  }

  async getSignupConfig(_request: unknown, context: HandlerContext) {
    const flow = await this.deps.settings.signupFlow(tenantOf(context));
    return create(GetSignupConfigResponseSchema, { signupConfig: signupConfigMessage(flow) });
  }

  /**
   * The wallet made right after creation. The user.created event still waits in the outbox, so it is
   * rewritten in the same write to show the wallet as the response does.
   */
  private async recordCreationWallet(user: UserDocument): Promise<UserDocument> {
    const wallet = await this.deps.wallets.tryNow(user);
    if (!wallet) return user;
    const ready: UserDocument = { ...user, wallet_status: "ready", wallets: [wallet] };
    const outbox = user.outbox.map((event) => userEvent(event.type as UserEventType, ready, event.created_at, event.id));
    const updated = await this.deps.users.recordWallet(user._id, wallet, { unrelayed: user.outbox.map((e) => e.id), outbox });
    return updated ?? (await this.deps.users.findById(user._id)) ?? ready;
  }

  /** Unknown, malformed, or of another project or environment: all the same 404. */
  private async findUser(context: HandlerContext, id: string): Promise<UserDocument> {
    const user = USER_ID_PATTERN.test(id) ? await this.deps.users.find(tenantOf(context), id) : null;
    if (!user) throw svcError("user_not_found");
    return user;
  }

  /**
   * The user an earlier run of this idempotent creation inserted under its reserved ids, if any: the ids are
   * tried in the order that run drew them, and one taken by another user (another phone) is passed over.
   */
  private async findEarlierCreation(scope: TenantScope, seed: string, phone: string): Promise<UserDocument | null> {
    for (let attempt = 0; attempt <= MAX_ID_DRAWS; attempt++) {
      const user = await this.deps.users.find(scope, reservedUserId(seed, attempt));
      if (!user) return null;
      if (user.phone === phone) return user;
    }
    return null;
  }

  private async insertWithFreshId(user: UserDocument, idFor: (attempt: number) => string): Promise<UserDocument> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.deps.users.insert(user);
        return user;
      } catch (error) {
        const conflict = conflictOf(error);
        if (conflict) throw conflict;
        // A random id already taken (about one chance in 900 million per existing user): draw again.
        if (!(error instanceof UniqueConflict) || error.field !== "id" || attempt >= MAX_ID_DRAWS) throw error;
        user = withCreatedEvent({ ...user, _id: idFor(attempt + 1) });
      }
    }
  }
}
