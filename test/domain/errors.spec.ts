// The error catalogue's mapping of each code to an HTTP status, a family and a Connect/gRPC code.
import { Code } from "@connectrpc/connect";
import { expect } from "chai";
import { ERROR_CATALOGUE, type ErrorCode } from "../../src/domain/errors.ts";

const codes = Object.keys(ERROR_CATALOGUE) as ErrorCode[];

describe("error catalogue", () => {
  it("maps 409s: AlreadyExists for duplicates, Aborted for work in progress, FailedPrecondition for the rest", () => {
    const duplicates = ["user_already_exists", "tagname_already_taken", "webhook_endpoint_exists"];
    const inProgress = ["idempotency_in_progress", "delivery_in_progress"];
    const conflicts = codes.filter((code) => ERROR_CATALOGUE[code].status === 409);
    expect(conflicts).to.include.members([...duplicates, ...inProgress, "webhook_endpoint_limit", "endpoint_disabled", "user_suspended"]);
    for (const code of conflicts) {
      const expected = duplicates.includes(code) ? Code.AlreadyExists : inProgress.includes(code) ? Code.Aborted : Code.FailedPrecondition;
      expect(Code[ERROR_CATALOGUE[code].connectCode], code).to.equal(Code[expected]);
    }
  });

  it("maps the other statuses as gRPC clients expect", () => {
    const byStatus: Record<number, Code[]> = {
      400: [Code.InvalidArgument],
      401: [Code.Unauthenticated],
      403: [Code.PermissionDenied],
      404: [Code.NotFound],
      413: [Code.ResourceExhausted],
      415: [Code.InvalidArgument],
      422: [Code.InvalidArgument],
      429: [Code.ResourceExhausted],
      431: [Code.ResourceExhausted],
      500: [Code.Internal],
      503: [Code.Unavailable],
    };
    for (const code of codes) {
      const { status, connectCode } = ERROR_CATALOGUE[code];
      if (status === 409) continue;
      expect(byStatus[status], `${code} (${status})`).to.include(connectCode);
    }
  });
});
