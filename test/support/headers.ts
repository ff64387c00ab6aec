// The five headers on every response, REST and RPC alike (docs/contract.md, Response headers).
import { expect } from "chai";
import type { Metadata } from "@grpc/grpc-js";

export const STANDARD_HEADERS = ["x-request-id", "x-api-version", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"] as const;

type HeaderSource = Headers | Metadata;

function headerOf(source: HeaderSource, name: string): string | null {
  if (source instanceof Headers) return source.get(name);
  const values = source.get(name);
  return values.length ? values.map(String).join(", ") : null;
}

/** Each of the five headers is present once and well formed. */
export function expectStandardHeaders(source: HeaderSource, context = ""): void {
  const get = (name: string) => headerOf(source, name);
  expect(get("x-request-id"), `${context} x-request-id`).to.match(/^req_[A-Za-z0-9]+$/);
  expect(get("x-api-version"), `${context} x-api-version`).to.equal("2026-11-20");
  expect(get("x-ratelimit-limit"), `${context} x-ratelimit-limit`).to.match(/^[1-9]\d*$/);
  expect(get("x-ratelimit-remaining"), `${context} x-ratelimit-remaining`).to.match(/^\d+$/);
  const reset = get("x-ratelimit-reset");
  expect(reset, `${context} x-ratelimit-reset`).to.match(/^\d+$/);
  expect(Number(reset), `${context} x-ratelimit-reset`).to.be.within(1, 60);
}
