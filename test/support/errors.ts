// Assertions on the error envelope (docs/contract.md, Error envelope).
import { fromBinary } from "@bufbuild/protobuf";
import { type Code, ConnectError } from "@connectrpc/connect";
import { expect } from "chai";
import { ErrorInfoSchema, type ErrorInfo } from "../../gen/google/rpc/error_details_pb.ts";
import { describeError } from "../../src/domain/errors.ts";
import type { RestResponse } from "./test-service.ts";

export function expectError(response: RestResponse, status: number, type: string, code: string, param?: string): void {
  expect(response.status, `status of ${response.text}`).to.equal(status);
  const error = response.body?.error;
  expect(error, response.text).to.be.an("object");
  expect(error.type).to.equal(type);
  expect(error.code).to.equal(code);
  expect(error.message).to.be.a("string").and.not.empty;
  if (param === undefined) expect(error).not.to.have.property("param");
  else expect(error.param).to.equal(param);
  expect(error.request_id).to.equal(response.headers.get("x-request-id"));
}

/** Runs a pure rule expected to refuse its input with 422 `validation_error` naming `param`. */
export function expectValidationError(action: () => unknown, param: string, message?: RegExp): void {
  let thrown: unknown;
  try {
    action();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, `expected a validation error on ${param}`).to.exist;
  const described = describeError(thrown);
  expect(described.code).to.equal("validation_error");
  expect(described.param).to.equal(param);
  expect(described.definition.status).to.equal(422);
  if (message) expect(described.message).to.match(message);
}

/** The Connect code of a failed RPC (connect-es client, any protocol) and the Svc code and param its ErrorInfo carries. */
export async function rpcErrorOf(call: Promise<unknown>): Promise<{ code: Code; reason: string; param: string | undefined }> {
  try {
    await call;
  } catch (error) {
    const e = ConnectError.from(error);
    const info = e.findDetails(ErrorInfoSchema)[0];
    return { code: e.code, reason: info?.reason ?? "", param: info?.metadata.param };
  }
  throw new Error("the call succeeded");
}

/**
 * A refusal in the Connect protocol's JSON as any HTTP client reads it (docs/contract.md, Connect and gRPC): the
 * HTTP status Connect gives `code`, the Connect error JSON, and one `google.rpc.ErrorInfo` detail (decoded from
 * its base64 `value`, not from the optional `debug`) with domain `svc`, the Svc code as `reason` and `param`.
 * Answers the ErrorInfo, for its other metadata (`retry_after`).
 */
export function expectConnectError(response: RestResponse, status: number, code: string, reason: string, param?: string): ErrorInfo {
  expect(response.status, `status of ${response.text}`).to.equal(status);
  expect(response.body?.code, response.text).to.equal(code);
  expect(response.body.message).to.be.a("string").and.not.empty;
  const details: { type: string; value: string }[] = response.body.details ?? [];
  expect(
    details.map((d) => d.type),
    response.text,
  ).to.deep.equal(["google.rpc.ErrorInfo"]);
  const info = fromBinary(ErrorInfoSchema, Buffer.from(details[0]!.value, "base64"));
  expect(info.domain).to.equal("svc");
  expect(info.reason).to.equal(reason);
  expect(info.metadata.param).to.equal(param);
  expect(response.headers.get("x-request-id")).to.match(/^req_[A-Za-z0-9]{24}$/);
  return info;
}
