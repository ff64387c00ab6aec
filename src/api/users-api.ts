// The REST surface of svc.v1.UsersService.
import { UsersService } from "../../gen/svc/v1/users_pb.ts";
import { jsonList } from "../representations/json-values.ts";
import { signupConfigJson, signupConfigSchema } from "../representations/signup-config.ts";
import { createUserRequestSchema, updateUserRequestSchema } from "../representations/user-requests.ts";
import { userJson, userListSchema, userSchema, userWithProfileJson, userWithProfileSchema } from "../representations/users.ts";
import { walletJson, walletListSchema } from "../representations/wallets.ts";
import { describeService } from "./method-description.ts";

const TAG = "Users";

export const usersApi = describeService(UsersService, {
  createUser: {
    status: 201,
    present: (r) => userJson(r.user!),
    operation: {
      summary: "Create a user",
      description:
        "In sandbox the user is verified and gets a simulated wallet; in live `verified` is false until the phone is verified. Emits `user.created`.",
      tag: TAG,
      success: { schema: userSchema, description: "The user, without profile." },
      requestBody: { schema: createUserRequestSchema, required: true },
      errors: ["user_already_exists", "tagname_already_taken"],
    },
  },
  listUsers: {
    status: 200,
    present: (r, path) => jsonList(path, r.data.map(userJson), r.hasMore),
    operation: {
      summary: "List users",
      description: "Newest first. Every filter given must match exactly (`tagname` ignoring case). Items carry no `profile`.",
      tag: TAG,
      success: { schema: userListSchema, description: "Users, newest first." },
    },
  },
  getUser: {
    status: 200,
    present: (r) => userWithProfileJson(r.user!, r.profile),
    operation: {
      summary: "Retrieve a user with its profile",
      description: "The one read that answers the user's personal data (`profile`); lists and events never carry it.",
      tag: TAG,
      success: { schema: userWithProfileSchema, description: "The user with `profile`." },
    },
  },
  updateUser: {
    status: 200,
    present: (r) => userWithProfileJson(r.user!, r.profile),
    // null clears a profile field.
    patchNull: "clear",
    operation: {
      summary: "Update a user's profile",
      description:
        "Only the profile fields sent are validated and changed; null clears one, except a required module of the published signup flow. " +
        "`phone` and `external_id` cannot be changed.",
      tag: TAG,
      success: { schema: userWithProfileSchema, description: "The user with `profile`." },
      requestBody: { schema: updateUserRequestSchema, required: false },
      errors: ["tagname_already_taken", "user_already_exists"],
    },
  },
  listUserWallets: {
    status: 200,
    present: (r, path) => jsonList(path, r.data.map(walletJson), r.hasMore),
    operation: {
      summary: "List a user's wallets",
      description: "None while the user's `wallet_status` is not `ready`, one afterwards, with its balance.",
      tag: TAG,
      success: { schema: walletListSchema, description: "The user's wallets." },
    },
  },
  getSignupConfig: {
    status: 200,
    present: (r) => signupConfigJson(r.signupConfig!),
    operation: {
      summary: "Retrieve the published signup flow",
      description:
        "Which profile fields creation takes and requires, the minimum age and the allowed countries; until it is published every field is optional.",
      tag: TAG,
      success: { schema: signupConfigSchema, description: "The signup flow of the key's project and environment." },
    },
  },
});
