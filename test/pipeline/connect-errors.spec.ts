// The catalogue's errors as the RPC doors answer them.
import { Code, ConnectError } from "@connectrpc/connect";
import { expect } from "chai";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.ts";
import { describeError, svcError } from "../../src/domain/errors.ts";
import { connectErrorOf } from "../../src/pipeline/connect-errors.ts";

describe("connectErrorOf", () => {
  it("gives a catalogue error its gRPC code and an ErrorInfo with the code, the param and the other details", () => {
    const error = connectErrorOf(svcError("rate_limit_exceeded", "Slow down.", { param: "phone", metadata: { retry_after: "7" } }));
    expect(error.code).to.equal(Code.ResourceExhausted);
    expect(error.rawMessage).to.equal("Slow down.");
    const [info, ...others] = error.findDetails(ErrorInfoSchema);
    expect(others).to.deep.equal([]);
    expect([info?.domain, info?.reason]).to.deep.equal(["svc", "rate_limit_exceeded"]);
    expect(info?.metadata).to.deep.equal({ retry_after: "7", param: "phone" });
  });

  it("answers the catalogue's message when the thrower gave none, and a 404 as NOT_FOUND", () => {
    const error = connectErrorOf(svcError("user_not_found"));
    expect([error.code, error.rawMessage]).to.deep.equal([Code.NotFound, "No user with this id."]);
  });

  it("passes Connect's own errors through, and makes anything else an unknown error", () => {
    const own = new ConnectError("deadline exceeded", Code.DeadlineExceeded);
    expect(connectErrorOf(own)).to.equal(own);
    expect(connectErrorOf(new Error("socket hang up")).code).to.equal(Code.Unknown);
  });

  it("is a plain error in the domain, described without any transport", () => {
    const error = svcError("validation_error", "name is too long.", { param: "name" });
    expect(error).not.to.be.instanceOf(ConnectError);
    expect(describeError(error)).to.deep.include({ code: "validation_error", message: "name is too long.", param: "name" });
  });
});
