// AdminService takes `authorization: Bearer <SVC_ADMIN_TOKEN>`, compared in constant time.
import { createHash, timingSafeEqual } from "node:crypto";
import type { Interceptor } from "@connectrpc/connect";
import { svcError } from "../domain/errors.ts";

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

export function adminInterceptor(adminToken: string): Interceptor {
  const expected = digest(`Bearer ${adminToken}`);
  return (next) => async (request) => {
    const given = request.header.get("authorization") ?? "";
    // Hashing first gives equal lengths, so the comparison time says nothing about the token.
    if (!timingSafeEqual(digest(given), expected)) throw svcError("admin_token_invalid");
    return next(request);
  };
}
