// The error catalogue's mapping of each code to an HTTP status, a family and a gRPC status.
import { expect } from "chai";
import { ERROR_CATALOGUE, type ErrorCode, type RpcStatus } from "../../src/domain/errors.ts";

const codes = Object.keys(ERROR_CATALOGUE) as ErrorCode[];

describe("error catalogue", () => {
  it("maps 409s: already_exists for duplicates, aborted for work in progress or to resume, failed_precondition for the rest", () => {
    const duplicates = ["user_already_exists", "tagname_already_taken", "webhook_endpoint_exists"];
    const inProgress = ["idempotency_in_progress", "delivery_in_progress", "stream_fell_behind"];
    const conflicts = codes.filter((code) => ERROR_CATALOGUE[code].status === 409);
    expect(conflicts).to.include.members([...duplicates, ...inProgress, "webhook_endpoint_limit", "endpoint_disabled", "user_suspended"]);
    for (const code of conflicts) {
      const expected = duplicates.includes(code) ? "already_exists" : inProgress.includes(code) ? "aborted" : "failed_precondition";
      expect(ERROR_CATALOGUE[code].rpcStatus, code).to.equal(expected);
    }
  });

  it("maps the other statuses as gRPC clients expect", () => {
    const byStatus: Record<number, RpcStatus> = {
      400: "invalid_argument",
      401: "unauthenticated",
      403: "permission_denied",
      404: "not_found",
      413: "resource_exhausted",
      415: "invalid_argument",
      422: "invalid_argument",
      429: "resource_exhausted",
      431: "resource_exhausted",
      500: "internal",
      503: "unavailable",
    };
    for (const code of codes) {
      const { status, rpcStatus } = ERROR_CATALOGUE[code];
      if (status === 409) continue;
      expect(rpcStatus, `${code} (${status})`).to.equal(byStatus[status]);
    }
  });
});
