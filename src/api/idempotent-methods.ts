// Which methods honour an Idempotency-Key, for every door alike: the public API's changes (every verb but GET),
// and AdminService's changes; its reads (Get..., List...) and streams ignore a key.
import type { DescMethod } from "@bufbuild/protobuf";
import { describedMethod } from "./public-api.ts";

export function takesIdempotencyKey(method: DescMethod): boolean {
  // A stream changes nothing: opening it again is the retry.
  if (method.methodKind !== "unary") return false;
  return describedMethod(method)?.takesIdempotencyKey ?? !/^(Get|List)[A-Z]/.test(method.name);
}
