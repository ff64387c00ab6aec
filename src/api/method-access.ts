// Which keys may call a method at all, from its description: sandbox-only methods (every `/v1/sandbox/...`
// route) refuse live keys, and methods behind a live setting refuse live keys of projects without it. The call
// pipeline asks this once per call, right after admission (key, version, rate limit) and before the body is read,
// so the refusal comes before any validation or lookup, on every transport alike.
import type { DescMethod } from "@bufbuild/protobuf";
import type { Principal } from "../access/principal.ts";
import { svcError } from "../domain/errors.ts";
import type { LiveFeatureSetting } from "./method-description.ts";
import { describedMethod } from "./public-api.ts";

/** Whether the project enabled a live setting (cached project settings). */
export type LiveSettingLookup = (projectId: string, setting: LiveFeatureSetting) => Promise<boolean>;

export type MethodAccessCheck = (method: DescMethod, principal: Principal) => Promise<void>;

export function methodAccessCheck(liveSettingEnabled: LiveSettingLookup): MethodAccessCheck {
  return async (method, principal) => {
    const described = describedMethod(method);
    if (!described || !principal.livemode) return;
    if (described.sandboxOnly) throw svcError("sandbox_only");
    if (described.liveSetting && !(await liveSettingEnabled(principal.projectId, described.liveSetting))) {
      throw svcError("live_feature_unavailable");
    }
  };
}
