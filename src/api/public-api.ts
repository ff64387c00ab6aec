// The public API: every method of the public services, as REST, Connect and gRPC callers reach it.
import type { DescMethod } from "@bufbuild/protobuf";
import { eventsApi } from "./events-api.ts";
import { kycSessionsApi, phoneVerificationApi, sandboxApi } from "./identity-api.ts";
import type { DescribedMethod } from "./method-description.ts";
import { requestLogsApi } from "./request-logs-api.ts";
import { sandboxTransactionsApi, transactionsApi } from "./transactions-api.ts";
import { usersApi } from "./users-api.ts";
import { webhookEndpointsApi } from "./webhook-endpoints-api.ts";

export const PUBLIC_API: readonly DescribedMethod[] = [
  ...usersApi,
  ...phoneVerificationApi,
  ...kycSessionsApi,
  ...sandboxApi,
  ...eventsApi,
  ...requestLogsApi,
  ...transactionsApi,
  ...sandboxTransactionsApi,
  ...webhookEndpointsApi,
];

const byMethod = new Map<DescMethod, DescribedMethod>(PUBLIC_API.map((m) => [m.method, m]));

/** The description of a public method; undefined for methods of other services (AdminService). */
export function describedMethod(method: DescMethod): DescribedMethod | undefined {
  return byMethod.get(method);
}
