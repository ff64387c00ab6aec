// Assertions on the spec's error envelope.
import { expect } from "chai";
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
