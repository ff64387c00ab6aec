// Assertions on the error envelope (docs/contract.md, Error envelope).
import { type Code, ConnectError } from "@connectrpc/connect";
import { expect } from "chai";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.ts";
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
