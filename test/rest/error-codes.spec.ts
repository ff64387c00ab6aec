// Every error code of the catalogue, each over REST and, where the code can arise there,
// over gRPC with a stock grpc-js client: status or gRPC code, type, code, param, and the request id.
import { expect } from "chai";
import { expectError } from "../support/errors.ts";
import { bearer, grpc, GrpcTestClient, type GrpcOutcome } from "../support/grpc-client.ts";
import { expectStandardHeaders } from "../support/headers.ts";
import { createKey, createProject } from "../support/tenancy.ts";
import { startTestService, type RestResponse, type TestService } from "../support/test-service.ts";

/** The keys and ids the cases need, made once. */
interface Fixture {
  svc: TestService;
  grpc: GrpcTestClient;
  revokedKey: string;
  suspendedOrgKey: string;
  liveKeyWithoutLive: string;
  /** The random part of the Default live key under the sandbox prefix: well formed, unknown. */
  sandboxPrefixedLiveKey: string;
  unknownKey: string;
}

interface ErrorCase {
  title: string;
  status: number;
  type: string;
  code: string;
  param?: string;
  grpcCode: grpc.status;
  rest: (fx: Fixture) => Promise<RestResponse>;
  /** Absent where the code cannot arise over gRPC (JSON bodies, REST paths, body size). */
  rpc?: (fx: Fixture) => Promise<GrpcOutcome>;
}

const A_USER_ID = "123456789";
const authorization = (value: string) => ({ authorization: value });

/** A REST read of a user and the same call over gRPC, with the given authorization header (or none). */
function readUserWith(header: (fx: Fixture) => string | null): Pick<ErrorCase, "rest" | "rpc"> {
  return {
    rest: (fx) => {
      const value = header(fx);
      return fx.svc.request("GET", `/v1/users/${A_USER_ID}`, { key: null, headers: value === null ? {} : authorization(value) });
    },
    rpc: (fx) => {
      const value = header(fx);
      return fx.grpc.call("UsersService", "GetUser", { id: A_USER_ID }, value === null ? {} : authorization(value));
    },
  };
}

function listEventsWith(query: string, rpcRequest: object): Pick<ErrorCase, "rest" | "rpc"> {
  return {
    rest: (fx) => fx.svc.request("GET", `/v1/events${query}`),
    rpc: (fx) => fx.grpc.call("EventsService", "ListEvents", rpcRequest, bearer(fx.svc.sandboxKey)),
  };
}

function createUserWithIdempotencyKey(key: string): Pick<ErrorCase, "rest" | "rpc"> {
  return {
    rest: (fx) => fx.svc.request("POST", "/v1/users", { body: { phone: "+14155550123" }, headers: { "idempotency-key": key } }),
    rpc: (fx) => fx.grpc.call("UsersService", "CreateUser", { phone: "+14155550123" }, { ...bearer(fx.svc.sandboxKey), "idempotency-key": key }),
  };
}

function postUsersRaw(rawBody: string): Pick<ErrorCase, "rest"> {
  return { rest: (fx) => fx.svc.request("POST", "/v1/users", { rawBody }) };
}

const missingKey = { status: 401, type: "authentication_error", code: "missing_api_key", grpcCode: grpc.status.UNAUTHENTICATED };
const invalidKey = { status: 401, type: "authentication_error", code: "invalid_api_key", grpcCode: grpc.status.UNAUTHENTICATED };
const routeNotFound = { status: 404, type: "invalid_request_error", code: "route_not_found", grpcCode: grpc.status.NOT_FOUND };
const invalidJson = { status: 400, type: "invalid_request_error", code: "invalid_json", grpcCode: grpc.status.INVALID_ARGUMENT };
const keyInvalid = { status: 400, type: "idempotency_error", code: "idempotency_key_invalid", grpcCode: grpc.status.INVALID_ARGUMENT };
const limitInvalid = { status: 422, type: "invalid_request_error", code: "validation_error", param: "limit", grpcCode: grpc.status.INVALID_ARGUMENT };

const CASES: ErrorCase[] = [
  { title: "no Authorization header", ...missingKey, ...readUserWith(() => null) },
  { title: "an empty Authorization header", ...missingKey, ...readUserWith(() => "") },
  { title: "a malformed key", ...invalidKey, ...readUserWith(() => "Bearer svc_test_tooShort") },
  { title: "a token that is not a key at all", ...invalidKey, ...readUserWith(() => "Bearer hello") },
  { title: "a well-formed unknown key", ...invalidKey, ...readUserWith((fx) => `Bearer ${fx.unknownKey}`) },
  { title: "a scheme other than Bearer", ...invalidKey, ...readUserWith((fx) => `Basic ${fx.svc.sandboxKey}`) },
  { title: "a live key's secret under the sandbox prefix", ...invalidKey, ...readUserWith((fx) => `Bearer ${fx.sandboxPrefixedLiveKey}`) },
  {
    title: "a revoked key",
    status: 401,
    type: "authentication_error",
    code: "api_key_revoked",
    grpcCode: grpc.status.UNAUTHENTICATED,
    ...readUserWith((fx) => `Bearer ${fx.revokedKey}`),
  },
  {
    title: "a key of a suspended organization",
    status: 403,
    type: "permission_error",
    code: "organization_suspended",
    grpcCode: grpc.status.PERMISSION_DENIED,
    ...readUserWith((fx) => `Bearer ${fx.suspendedOrgKey}`),
  },
  {
    title: "a live key of an organization without live access",
    status: 403,
    type: "permission_error",
    code: "live_not_enabled",
    grpcCode: grpc.status.PERMISSION_DENIED,
    ...readUserWith((fx) => `Bearer ${fx.liveKeyWithoutLive}`),
  },
  {
    title: "a Svc-Version that does not exist",
    status: 400,
    type: "invalid_request_error",
    code: "unsupported_version",
    grpcCode: grpc.status.INVALID_ARGUMENT,
    rest: (fx) => fx.svc.request("GET", `/v1/users/${A_USER_ID}`, { headers: { "svc-version": "2019-01-01" } }),
    rpc: (fx) => fx.grpc.call("UsersService", "GetUser", { id: A_USER_ID }, { ...bearer(fx.svc.sandboxKey), "svc-version": "2019-01-01" }),
  },
  { title: "an unknown path", ...routeNotFound, rest: (fx) => fx.svc.request("GET", "/nowhere") },
  { title: "a typo under /v1", ...routeNotFound, rest: (fx) => fx.svc.request("GET", `/v1/user/${A_USER_ID}`) },
  { title: "a known path with the wrong method", ...routeNotFound, rest: (fx) => fx.svc.request("PUT", `/v1/users/${A_USER_ID}`, { body: {} }) },
  { title: "a body that is not JSON", ...invalidJson, ...postUsersRaw('{"phone": "+1415') },
  { title: "a JSON array body", ...invalidJson, ...postUsersRaw('[{"phone":"+14155550123"}]') },
  { title: "a JSON string body", ...invalidJson, ...postUsersRaw('"+14155550123"') },
  { title: "a JSON number body", ...invalidJson, ...postUsersRaw("42") },
  {
    title: "a body over 64 KiB",
    status: 413,
    type: "invalid_request_error",
    code: "payload_too_large",
    grpcCode: grpc.status.RESOURCE_EXHAUSTED,
    rest: (fx) => fx.svc.request("POST", "/v1/users", { body: { phone: "+14155550123", email: `${"a".repeat(64 * 1024)}@example.com` } }),
  },
  { title: "an empty Idempotency-Key", ...keyInvalid, ...createUserWithIdempotencyKey("") },
  { title: "an Idempotency-Key of 256 characters", ...keyInvalid, ...createUserWithIdempotencyKey("k".repeat(256)) },
  { title: "an Idempotency-Key with a space", ...keyInvalid, ...createUserWithIdempotencyKey("two words") },
  {
    title: "an Idempotency-Key with a non-ASCII character",
    ...keyInvalid,
    // HTTP headers are bytes: a UTF-8 "é" arrives as two bytes outside visible ASCII.
    // gRPC metadata cannot carry it at all: grpc-js refuses such a value before sending.
    rest: (fx) =>
      fx.svc.request("POST", "/v1/users", {
        body: { phone: "+14155550123" },
        headers: { "idempotency-key": Buffer.from("café", "utf8").toString("latin1") },
      }),
  },
  {
    title: "an unknown starting_after cursor",
    status: 400,
    type: "invalid_request_error",
    code: "invalid_cursor",
    grpcCode: grpc.status.INVALID_ARGUMENT,
    ...listEventsWith("?starting_after=evt_00000000-0000-4000-8000-000000000000", { starting_after: "evt_00000000-0000-4000-8000-000000000000" }),
  },
  { title: "limit=0 on a list", ...limitInvalid, ...listEventsWith("?limit=0", { limit: 0 }) },
  { title: "limit=101 on a list", ...limitInvalid, ...listEventsWith("?limit=101", { limit: 101 }) },
  { title: "limit=abc on a list", ...limitInvalid, rest: (fx) => fx.svc.request("GET", "/v1/events?limit=abc") },
];

describe("error codes over REST and gRPC", () => {
  const fx = {} as Fixture;

  before(async () => {
    fx.svc = await startTestService();
    fx.grpc = new GrpcTestClient(fx.svc.grpcAddress);
    const revoked = await createKey(fx.svc, fx.svc.projectId);
    await fx.svc.admin.revokeApiKey({ id: revoked.id });
    fx.revokedKey = revoked.secret;
    const suspended = await createProject(fx.svc, { liveEnabled: true });
    fx.suspendedOrgKey = (await createKey(fx.svc, suspended.projectId)).secret;
    await fx.svc.admin.updateOrganization({ id: suspended.organizationId, suspended: true });
    const withoutLive = await createProject(fx.svc);
    fx.liveKeyWithoutLive = (await createKey(fx.svc, withoutLive.projectId, { livemode: true })).secret;
    fx.sandboxPrefixedLiveKey = `svc_test_${fx.svc.liveKey.slice("svc_live_".length)}`;
    fx.unknownKey = `svc_test_${"Z".repeat(32)}`;
  });

  after(async () => {
    fx.grpc.close();
    await fx.svc.stop();
  });

  for (const c of CASES) {
    it(`${c.code} (${c.status}) for ${c.title} over REST`, async () => {
      const response = await c.rest(fx);
      expectError(response, c.status, c.type, c.code, c.param);
      expectStandardHeaders(response.headers, c.code);
    });
    if (c.rpc) {
      const rpc = c.rpc;
      it(`${c.code} (${grpc.status[c.grpcCode]}) for ${c.title} over gRPC`, async () => {
        const outcome = await rpc(fx);
        if (outcome.ok) expect.fail(`the call succeeded; expected ${c.code}`);
        const { failure } = outcome;
        expect(failure.info.reason, failure.details).to.equal(c.code);
        expect(failure.info.domain).to.equal("svc");
        expect(grpc.status[failure.code]).to.equal(grpc.status[c.grpcCode]);
        expect(failure.info.metadata.param).to.equal(c.param);
        expectStandardHeaders(failure.metadata, c.code);
      });
    }
  }

  it("the live key of the Default project (live enabled) passes the same checks", async () => {
    const response = await fx.svc.request("GET", `/v1/users/${A_USER_ID}`, { key: fx.svc.liveKey });
    expectError(response, 404, "invalid_request_error", "user_not_found");
  });
});
