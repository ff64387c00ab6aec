// Which methods honour an Idempotency-Key, for every door alike: the public API's changes (every verb but GET),
// and AdminService's changes. AdminService's reads (Get..., List...) ignore a key, and so does CreateApiKey: its
// answer holds the new key's secret, which is shown once and never stored, so there is no answer to replay.
import type { DescMethod } from "@bufbuild/protobuf";
import { AdminService } from "../../gen/svc/admin/v1/admin_pb.ts";
import { describedMethod } from "./public-api.ts";

export function takesIdempotencyKey(method: DescMethod): boolean {
  const described = describedMethod(method);
  if (described) return described.takesIdempotencyKey;
  return !/^(Get|List)[A-Z]/.test(method.name) && method !== AdminService.method.createApiKey;
}
