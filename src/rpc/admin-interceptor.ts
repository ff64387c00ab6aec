// AdminService takes `authorization: Bearer <SVC_ADMIN_TOKEN>`, compared in constant time.
import type { Interceptor } from "@connectrpc/connect";
import { adminTokenMatches } from "../access/admin-token.ts";
import { svcError } from "../domain/errors.ts";

export function adminInterceptor(adminToken: string): Interceptor {
  return (next) => async (request) => {
    if (!adminTokenMatches(request.header.get("authorization") ?? "", `Bearer ${adminToken}`)) throw svcError("admin_token_invalid");
    return next(request);
  };
}
