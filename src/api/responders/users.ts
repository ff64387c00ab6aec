// REST answers of svc.v1.UsersService.
import type {
  CreateUserResponse,
  GetSignupConfigResponse,
  GetUserResponse,
  ListUserWalletsResponse,
  UpdateUserResponse,
} from "../../../gen/svc/v1/users_pb.ts";
import { jsonList } from "../../representations/json-values.ts";
import { signupConfigJson, userJson, userWithProfileJson, walletJson } from "../../representations/users.ts";
import type { ResponderTable } from "../responders.ts";

export const userResponders: ResponderTable = {
  "svc.v1.UsersService.CreateUser": (r: CreateUserResponse) => ({ status: 201, body: userJson(r.user!) }),
  "svc.v1.UsersService.GetUser": (r: GetUserResponse) => ({ status: 200, body: userWithProfileJson(r.user!, r.profile) }),
  "svc.v1.UsersService.UpdateUser": (r: UpdateUserResponse) => ({ status: 200, body: userWithProfileJson(r.user!, r.profile) }),
  "svc.v1.UsersService.ListUserWallets": (r: ListUserWalletsResponse, path) => ({
    status: 200,
    body: jsonList(path, r.data.map(walletJson), r.hasMore),
  }),
  "svc.v1.UsersService.GetSignupConfig": (r: GetSignupConfigResponse) => ({ status: 200, body: signupConfigJson(r.signupConfig!) }),
};
