// CallPipeline in process, without HTTP: admission (key, version, quota), the transport's checks that store
// nothing, the Idempotency-Key claim, replay or run-and-settle, and the headers and errors of every outcome.
// Built over the real RequestGate, ApiKeyAuthenticator, RateLimiter and IdempotencyGuard on a fresh database.
import { create, type DescMethod, type Message } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { expect } from "chai";
import { CreateUserRequestSchema, CreateUserResponseSchema, UsersService, type CreateUserResponse } from "../../gen/svc/v1/users_pb.ts";
import { ApiKeyAuthenticator } from "../../src/access/api-key-authenticator.ts";
import { creationReservationKey, type CreationReservation } from "../../src/access/creation-reservation.ts";
import { IdempotencyGuard } from "../../src/access/idempotency-guard.ts";
import { principalKey, type Principal } from "../../src/access/principal.ts";
import { RateLimiter } from "../../src/access/rate-limiter.ts";
import { RequestGate } from "../../src/access/request-gate.ts";
import { generateApiKey } from "../../src/domain/api-keys.ts";
import { describeError, svcError, type ErrorCode } from "../../src/domain/errors.ts";
import { CallFailure, CallPipeline, type Call, type CallHandler, type DecodedRequest } from "../../src/pipeline/call-pipeline.ts";
import { connectErrorOf } from "../../src/pipeline/connect-errors.ts";
import { testHandlerContext } from "../support/handler-context.ts";
import { ServiceRegistry } from "../../src/api/service-registry.ts";
import { TenancyAdmin } from "../../src/services/tenancy-admin.ts";
import { ApiKeyRepository } from "../../src/store/api-key-repository.ts";
import type { Database } from "../../src/store/database.ts";
import { IdempotencyRepository } from "../../src/store/idempotency-repository.ts";
import { OrganizationRepository } from "../../src/store/organization-repository.ts";
import { ProjectRepository } from "../../src/store/project-repository.ts";
import { RateLimitRepository } from "../../src/store/rate-limit-repository.ts";
import { freshDatabase } from "../support/database.ts";
import { eventually } from "../support/eventually.ts";

const DEFAULT_RATE_LIMIT = 1000;
const VERSION = "2026-11-20";
// 5 s into a rate-limit window: X-RateLimit-Reset is 55 throughout.
const NOW = Date.UTC(2026, 10, 22, 10, 0, 5);
const RESET_SECONDS = "55";

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** The CreateUser response that carries an Answer: its body rides in the user's external_id. */
function answerMessage(answer: Answer) {
  return create(CreateUserResponseSchema, { user: { id: String(answer.body.id ?? ""), externalId: JSON.stringify(answer) } });
}

/**
 * A handler that records what the pipeline asks of it. Answers travel as CreateUser response messages, as the
 * pipeline stores and replays them; `call` is the call it runs for (set by `run`).
 */
class RecordingHandler implements CallHandler<Answer> {
  call!: Call;
  prepared = 0;
  executed: Principal[] = [];
  reservations: (CreationReservation | null)[] = [];
  stored: Answer[] = [];
  replays: Answer[] = [];

  constructor(
    private readonly behaviour: {
      request?: { phone: string };
      prepare?: () => void;
      refusal?: unknown;
      execute?: (principal: Principal, reservation: CreationReservation | null) => Promise<Answer>;
    } = {},
  ) {}

  decode(): DecodedRequest {
    this.prepared++;
    this.behaviour.prepare?.();
    if (this.behaviour.refusal) return { refusal: this.behaviour.refusal, raw: "{}" };
    return { message: create(CreateUserRequestSchema, this.behaviour.request ?? { phone: "+14155550100" }) };
  }

  async execute(): Promise<Answer> {
    const principal = this.call.values.get(principalKey)!;
    const reservation = this.call.values.get(creationReservationKey);
    this.executed.push(principal);
    this.reservations.push(reservation);
    return this.behaviour.execute
      ? this.behaviour.execute(principal, reservation)
      : { status: 201, body: { id: "123456789", run: this.executed.length } };
  }

  answerOf(result: Answer) {
    this.stored.push(result);
    return answerMessage(result);
  }

  replayed(response: Message): Answer {
    const answer = JSON.parse((response as CreateUserResponse).user!.externalId!) as Answer;
    this.replays.push(answer);
    return answer;
  }
}

describe("CallPipeline", () => {
  let database: Database;
  let gate: RequestGate;
  let idempotency: IdempotencyGuard;
  let pipeline: CallPipeline;
  let reported: { error: unknown; requestId: string }[];
  let sandboxKey: string;
  let sandboxKeyId: string;
  let projectId: string;
  let tenancy: TenancyAdmin;
  let callCount = 0;
  const clock = () => new Date(NOW);
  const registry = new ServiceRegistry([]);

  /** A call's context values and its context over them. */
  function contextOf(method: DescMethod) {
    const context = testHandlerContext(method);
    return { values: context.values, context: () => context };
  }

  before(async () => {
    database = await freshDatabase("pipeline");
    const repositories = {
      organizations: new OrganizationRepository(database.db),
      projects: new ProjectRepository(database.db),
      apiKeys: new ApiKeyRepository(database.db),
    };
    const idempotencyRecords = new IdempotencyRepository(database.db);
    const rateLimits = new RateLimitRepository(database.db);
    await Promise.all([...Object.values(repositories), idempotencyRecords, rateLimits].map((r) => r.ensureIndexes()));
    const authenticator = new ApiKeyAuthenticator(repositories.apiKeys, repositories.organizations, {
      clock,
      defaultRateLimit: DEFAULT_RATE_LIMIT,
      cacheMs: 0,
    });
    gate = new RequestGate(authenticator, new RateLimiter(rateLimits, clock), DEFAULT_RATE_LIMIT);
    idempotency = new IdempotencyGuard(idempotencyRecords, clock);
    tenancy = new TenancyAdmin(repositories, authenticator, clock);
    const organization = await tenancy.createOrganization({ name: "Pipeline organization" });
    const project = await tenancy.createProject({ organizationId: organization._id, name: "Pipeline project" });
    projectId = project._id;
    const { key, secret } = await tenancy.createApiKey({ projectId, livemode: false });
    sandboxKey = secret;
    sandboxKeyId = key._id;
  });

  after(async () => {
    await database.close();
  });

  beforeEach(() => {
    reported = [];
    pipeline = new CallPipeline({ gate, idempotency, registry, onInternalError: (error, requestId) => reported.push({ error, requestId }) });
  });

  function newCall(overrides: Partial<Omit<Call, "headers" | "caller">> & { authorization?: string | undefined } = {}): Call {
    callCount++;
    const { authorization, ...rest } = { authorization: `Bearer ${sandboxKey}`, ...overrides };
    return pipeline.newCall({
      requestId: `req_test${callCount}`,
      door: "rest",
      method: UsersService.method.createUser,
      caller: { kind: "bearer", authorization },
      version: undefined,
      clientAddress: "192.0.2.1",
      idempotencyKey: undefined,
      takesIdempotencyKey: true,
      ...contextOf(UsersService.method.createUser),
      ...rest,
    });
  }

  /** Runs `call` with `handler`, which reads the principal and reservation from the call's context. */
  function run(call: Call, handler: RecordingHandler): Promise<Answer> {
    handler.call = call;
    return pipeline.run(call, handler);
  }

  async function refusal(promise: Promise<unknown>): Promise<CallFailure> {
    try {
      await promise;
    } catch (error) {
      expect(error, String(error)).to.be.instanceOf(CallFailure);
      return error as CallFailure;
    }
    return expect.fail("the call succeeded; expected a CallFailure");
  }

  function expectFailure(failure: CallFailure, code: ErrorCode, status: number, connectCode: Code): void {
    expect(failure.described.code, failure.message).to.equal(code);
    expect(failure.described.definition.status).to.equal(status);
    // What the RPC doors answer for it.
    expect(Code[connectErrorOf(failure.error).code]).to.equal(Code[connectCode]);
    expect(describeError(failure.error).code).to.equal(code);
  }

  function uniqueKey(label: string): string {
    return `idem-${label}-${callCount}-${Math.random().toString(36).slice(2)}`;
  }

  describe("refusals before the method", () => {
    for (const [label, authorization, code] of [
      ["no Authorization header", undefined, "missing_api_key"],
      ["an empty Authorization header", "  ", "missing_api_key"],
      ["a Basic credential", "Basic dXNlcjpwYXNz", "invalid_api_key"],
      ["a malformed key", "Bearer svc_test_short", "invalid_api_key"],
      ["a well-formed unknown key", `Bearer ${generateApiKey(false)}`, "invalid_api_key"],
    ] as const) {
      it(`refuses ${label} with 401 ${code}, running neither prepare nor execute`, async () => {
        const handler = new RecordingHandler();
        const call = newCall({ authorization, idempotencyKey: uniqueKey("auth") });
        const failure = await refusal(run(call, handler));
        expectFailure(failure, code, 401, Code.Unauthenticated);
        expect(handler.prepared).to.equal(0);
        expect(handler.executed).to.have.length(0);
        expect(failure.headers["X-Request-Id"]).to.equal(call.requestId);
        expect(failure.headers["X-API-Version"]).to.equal(VERSION);
        // Counted against the client address with the default quota.
        expect(failure.headers["X-RateLimit-Limit"]).to.equal(String(DEFAULT_RATE_LIMIT));
        expect(failure.headers["X-RateLimit-Reset"]).to.equal(RESET_SECONDS);
        expect(failure.headers).not.to.have.property("Retry-After");
        expect(reported).to.deep.equal([]);
      });
    }

    it("refuses a revoked key with 401 api_key_revoked", async () => {
      const { key, secret } = await tenancy.createApiKey({ projectId, livemode: false });
      await tenancy.revokeApiKey(key._id);
      const handler = new RecordingHandler();
      const failure = await refusal(run(newCall({ authorization: `Bearer ${secret}` }), handler));
      expectFailure(failure, "api_key_revoked", 401, Code.Unauthenticated);
      expect(handler.executed).to.have.length(0);
    });

    it("refuses an unknown Svc-Version with 400 unsupported_version naming it", async () => {
      const handler = new RecordingHandler();
      const call = newCall({ version: "2020-01-01" });
      const failure = await refusal(run(call, handler));
      expectFailure(failure, "unsupported_version", 400, Code.InvalidArgument);
      expect(failure.described.message).to.contain("2020-01-01");
      expect(handler.prepared).to.equal(0);
      expect(handler.executed).to.have.length(0);
      expect(failure.headers["X-Request-Id"]).to.equal(call.requestId);
      expect(failure.headers["X-RateLimit-Limit"]).to.equal(String(DEFAULT_RATE_LIMIT));
    });

    it("accepts the known Svc-Version", async () => {
      const handler = new RecordingHandler();
      await run(newCall({ version: VERSION }), handler);
      expect(handler.executed).to.have.length(1);
    });

    it("refuses past the key's quota with 429 rate_limit_exceeded and Retry-After = the window's reset seconds", async () => {
      const { key, secret } = await tenancy.createApiKey({ projectId, livemode: false, rateLimit: 2 });
      const handler = new RecordingHandler();
      const first = newCall({ authorization: `Bearer ${secret}` });
      await run(first, handler);
      expect(first.headers["X-RateLimit-Limit"]).to.equal("2");
      expect(first.headers["X-RateLimit-Remaining"]).to.equal("1");
      await run(newCall({ authorization: `Bearer ${secret}` }), handler);
      const third = newCall({ authorization: `Bearer ${secret}`, idempotencyKey: uniqueKey("quota") });
      const failure = await refusal(run(third, handler));
      expectFailure(failure, "rate_limit_exceeded", 429, Code.ResourceExhausted);
      expect(handler.executed.map((p) => p.apiKeyId)).to.deep.equal([key._id, key._id]);
      expect(handler.prepared).to.equal(2);
      expect(failure.headers).to.include({
        "X-Request-Id": third.requestId,
        "X-RateLimit-Limit": "2",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": RESET_SECONDS,
        "Retry-After": RESET_SECONDS,
      });
      expect(failure.described.metadata.retry_after).to.equal(RESET_SECONDS);
      expect(reported).to.deep.equal([]);
    });

    it("uses the error's own retry_after for Retry-After when the method refuses with 429", async () => {
      const handler = new RecordingHandler({
        execute: async () => {
          throw svcError("rate_limit_exceeded", "Wait before sending another code.", { metadata: { retry_after: "42" } });
        },
      });
      const key = uniqueKey("resend");
      const failure = await refusal(run(newCall({ idempotencyKey: key }), handler));
      expectFailure(failure, "rate_limit_exceeded", 429, Code.ResourceExhausted);
      expect(failure.headers["Retry-After"]).to.equal("42");
      expect(failure.headers["X-RateLimit-Reset"]).to.equal(RESET_SECONDS);
      // A 429 is not kept: a retry with the key runs the method again.
      const retry = new RecordingHandler();
      const call = newCall({ idempotencyKey: key });
      await run(call, retry);
      expect(retry.executed).to.have.length(1);
      expect(call.headers).not.to.have.property("Idempotent-Replayed");
    });

    it("refuses an Idempotency-Key that is not 1 to 255 visible ASCII characters with 400 idempotency_key_invalid", async () => {
      const handler = new RecordingHandler();
      const failure = await refusal(run(newCall({ idempotencyKey: "has a space" }), handler));
      expectFailure(failure, "idempotency_key_invalid", 400, Code.InvalidArgument);
      expect(handler.prepared).to.equal(1);
      expect(handler.executed).to.have.length(0);
      const tooLong = await refusal(run(newCall({ idempotencyKey: "k".repeat(256) }), new RecordingHandler()));
      expect(tooLong.described.code).to.equal("idempotency_key_invalid");
    });
  });

  describe("a successful call", () => {
    it("runs execute once with the key's principal and answers the five headers", async () => {
      const handler = new RecordingHandler();
      const call = newCall();
      const answer = await run(call, handler);
      expect(answer).to.deep.equal({ status: 201, body: { id: "123456789", run: 1 } });
      expect(handler.executed).to.have.length(1);
      expect(handler.executed[0]).to.deep.include({ apiKeyId: sandboxKeyId, projectId, livemode: false, rateLimit: DEFAULT_RATE_LIMIT });
      expect(call.headers["X-Request-Id"]).to.equal(call.requestId);
      expect(call.headers["X-API-Version"]).to.equal(VERSION);
      expect(call.headers["X-RateLimit-Limit"]).to.equal(String(DEFAULT_RATE_LIMIT));
      expect(Number(call.headers["X-RateLimit-Remaining"])).to.be.within(0, DEFAULT_RATE_LIMIT - 1);
      expect(call.headers["X-RateLimit-Reset"]).to.equal(RESET_SECONDS);
      expect(call.headers).not.to.have.property("Idempotent-Replayed");
      expect(call.headers).not.to.have.property("Retry-After");
      // Without an Idempotency-Key nothing is stored.
      expect(handler.stored).to.have.length(0);
    });

    it("does not claim the key of a method that takes none: both calls run", async () => {
      const key = uniqueKey("read");
      const handler = new RecordingHandler();
      await run(newCall({ idempotencyKey: key, takesIdempotencyKey: false }), handler);
      const second = newCall({ idempotencyKey: key, takesIdempotencyKey: false });
      await run(second, handler);
      expect(handler.executed).to.have.length(2);
      expect(handler.stored).to.have.length(0);
      expect(second.headers).not.to.have.property("Idempotent-Replayed");
    });
  });

  describe("idempotency", () => {
    it("stores the answer while the method's answer writes still run, and answers only once they are done", async () => {
      const key = uniqueKey("alongside");
      const events: string[] = [];
      let finishWrite = () => {};
      const handler = new RecordingHandler({
        execute: async (_principal, reservation) => {
          const write = new Promise<void>((resolve) => {
            finishWrite = () => {
              events.push("write done");
              resolve();
            };
          });
          reservation!.answerWrites.push(write);
          return { status: 201, body: { id: "123456789" } };
        },
      });
      const answered = run(newCall({ idempotencyKey: key }), handler).then((answer) => {
        events.push("answered");
        return answer;
      });
      const records = database.db.collection<{ _id: string; state: string }>("idempotency_keys");
      const recordId = `${projectId}|test|${key}`;
      await eventually(
        () => records.findOne({ _id: recordId }),
        (record) => record?.state === "completed",
      );
      expect(events).to.deep.equal([]);
      finishWrite();
      expect((await answered).status).to.equal(201);
      expect(events).to.deep.equal(["write done", "answered"]);
    });

    it("without an Idempotency-Key there is no reservation to defer writes to", async () => {
      let seen: CreationReservation | null | undefined;
      await run(
        newCall(),
        new RecordingHandler({
          execute: async (_principal, reservation) => {
            seen = reservation;
            return { status: 201, body: {} };
          },
        }),
      );
      expect(seen).to.equal(null);
    });

    it("stores nothing when prepare refuses: a corrected retry with the same key runs", async () => {
      const key = uniqueKey("prepare");
      const broken = new RecordingHandler({
        prepare: () => {
          throw svcError("invalid_json", "The request body is not valid JSON.");
        },
      });
      const failure = await refusal(run(newCall({ idempotencyKey: key }), broken));
      expectFailure(failure, "invalid_json", 400, Code.InvalidArgument);
      expect(broken.executed).to.have.length(0);
      expect(broken.stored).to.have.length(0);

      const corrected = new RecordingHandler();
      const call = newCall({ idempotencyKey: key });
      const answer = await run(call, corrected);
      expect(corrected.executed).to.have.length(1);
      expect(answer.status).to.equal(201);
      expect(call.headers).not.to.have.property("Idempotent-Replayed");
      expect(corrected.stored).to.have.length(1);
    });

    it("replays the stored answer with the original request id and Idempotent-Replayed: true, without running execute", async () => {
      const key = uniqueKey("replay");
      const original = new RecordingHandler();
      const first = newCall({ idempotencyKey: key });
      const answer = await run(first, original);
      expect(original.executed).to.have.length(1);

      const again = new RecordingHandler();
      const second = newCall({ idempotencyKey: key });
      expect(second.requestId).not.to.equal(first.requestId);
      const replayed = await run(second, again);
      expect(again.executed).to.have.length(0);
      expect(again.replays).to.deep.equal([answer]);
      expect(replayed).to.deep.equal(answer);
      expect(second.headers["X-Request-Id"]).to.equal(first.requestId);
      expect(second.headers["Idempotent-Replayed"]).to.equal("true");
      // The replay is still a counted request with the five headers.
      expect(second.headers["X-API-Version"]).to.equal(VERSION);
      expect(second.headers["X-RateLimit-Limit"]).to.equal(String(DEFAULT_RATE_LIMIT));
      expect(second.headers["X-RateLimit-Reset"]).to.equal(RESET_SECONDS);
    });

    it("keeps one key space for every door: the same key and request through another door replays", async () => {
      const key = uniqueKey("doors");
      const first = newCall({ idempotencyKey: key, door: "rest" });
      const answer = await run(first, new RecordingHandler());
      for (const door of ["connect", "grpc", "dashboard"] as const) {
        const other = new RecordingHandler();
        const call = newCall({ idempotencyKey: key, door });
        expect(await run(call, other)).to.deep.equal(answer);
        expect(other.executed).to.have.length(0);
        expect(call.headers).to.include({ "Idempotent-Replayed": "true", "X-Request-Id": first.requestId });
      }
    });

    it("claims the key of a request its door could not decode: a reused key is told so first, else the refusal frees the key", async () => {
      const key = uniqueKey("undecodable");
      await run(newCall({ idempotencyKey: key }), new RecordingHandler());
      const reused = await refusal(
        run(newCall({ idempotencyKey: key }), new RecordingHandler({ refusal: svcError("validation_error", "no", { param: "x" }) })),
      );
      expectFailure(reused, "idempotency_key_reuse", 422, Code.InvalidArgument);

      const fresh = uniqueKey("undecodable-fresh");
      const invalid = new RecordingHandler({ refusal: svcError("validation_error", "x is unknown.", { param: "x" }) });
      const failure = await refusal(run(newCall({ idempotencyKey: fresh }), invalid));
      expectFailure(failure, "validation_error", 422, Code.InvalidArgument);
      expect(failure.described.param).to.equal("x");
      expect(invalid.executed).to.have.length(0);
      const corrected = new RecordingHandler({ request: { phone: "+14155550199" } });
      await run(newCall({ idempotencyKey: fresh }), corrected);
      expect(corrected.executed).to.have.length(1);
    });

    it("refuses the same key with a different fingerprint with 422 idempotency_key_reuse", async () => {
      const key = uniqueKey("reuse");
      await run(newCall({ idempotencyKey: key }), new RecordingHandler({ request: { phone: "+14155550100" } }));
      const other = new RecordingHandler({ request: { phone: "+14155550101" } });
      const call = newCall({ idempotencyKey: key });
      const failure = await refusal(run(call, other));
      expectFailure(failure, "idempotency_key_reuse", 422, Code.InvalidArgument);
      expect(failure.described.definition.type).to.equal("idempotency_error");
      expect(other.executed).to.have.length(0);
      expect(other.replays).to.have.length(0);
      expect(failure.headers["X-Request-Id"]).to.equal(call.requestId);
      expect(failure.headers).not.to.have.property("Idempotent-Replayed");
    });

    it("refuses a concurrent call with the same key with 409 idempotency_in_progress, then replays once settled", async () => {
      const key = uniqueKey("concurrent");
      let release!: () => void;
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      const slow = new RecordingHandler({
        execute: async () => {
          started();
          await new Promise<void>((resolve) => (release = resolve));
          return { status: 201, body: { id: "slow" } };
        },
      });
      const first = newCall({ idempotencyKey: key });
      const firstRun = run(first, slow);
      await running;

      const concurrent = new RecordingHandler();
      const failure = await refusal(run(newCall({ idempotencyKey: key }), concurrent));
      expectFailure(failure, "idempotency_in_progress", 409, Code.Aborted);
      expect(failure.described.definition.type).to.equal("idempotency_error");
      expect(concurrent.executed).to.have.length(0);

      release();
      expect(await firstRun).to.deep.equal({ status: 201, body: { id: "slow" } });
      const after = new RecordingHandler();
      const third = newCall({ idempotencyKey: key });
      expect(await run(third, after)).to.deep.equal({ status: 201, body: { id: "slow" } });
      expect(after.executed).to.have.length(0);
      expect(third.headers["X-Request-Id"]).to.equal(first.requestId);
    });

    it("turns an unexpected error into internal_error, reports it with the call's request id, and stores nothing", async () => {
      const key = uniqueKey("internal");
      const bug = new TypeError("Cannot read properties of undefined (reading 'secret_detail')");
      const broken = new RecordingHandler({
        execute: async () => {
          throw bug;
        },
      });
      const call = newCall({ idempotencyKey: key });
      const failure = await refusal(run(call, broken));
      expectFailure(failure, "internal_error", 500, Code.Internal);
      expect(failure.described.definition.type).to.equal("api_error");
      expect(failure.message).not.to.contain("secret_detail");
      expect(failure.described.message).not.to.contain("secret_detail");
      expect(failure.error.message).not.to.contain("secret_detail");
      expect(reported).to.have.length(1);
      expect(reported[0]!.error).to.equal(bug);
      expect(reported[0]!.requestId).to.equal(call.requestId);
      expect(failure.headers["X-Request-Id"]).to.equal(call.requestId);
      expect(failure.headers["X-RateLimit-Limit"]).to.equal(String(DEFAULT_RATE_LIMIT));
      expect(failure.headers).not.to.have.property("Retry-After");

      const retry = new RecordingHandler();
      const retryCall = newCall({ idempotencyKey: key });
      expect(await run(retryCall, retry)).to.deep.include({ status: 201 });
      expect(retry.executed).to.have.length(1);
      expect(retryCall.headers).not.to.have.property("Idempotent-Replayed");
      expect(retryCall.headers["X-Request-Id"]).to.equal(retryCall.requestId);
    });

    it("reports a Connect internal error that is not the service's own, without storing it", async () => {
      const key = uniqueKey("connect-internal");
      const raw = new ConnectError("socket hang up", Code.Internal);
      const failure = await refusal(run(newCall({ idempotencyKey: key }), new RecordingHandler({ execute: async () => Promise.reject(raw) })));
      expect(failure.described.code).to.equal("internal_error");
      expect(reported.map((r) => r.error)).to.deep.equal([raw]);
      const retry = new RecordingHandler();
      await run(newCall({ idempotencyKey: key }), retry);
      expect(retry.executed).to.have.length(1);
    });

    for (const [code, status, connectCode] of [
      ["user_not_found", 404, Code.NotFound],
      ["user_already_exists", 409, Code.AlreadyExists],
    ] as const) {
      it(`stores a ${status} ${code} and replays it with the original request id`, async () => {
        const key = uniqueKey(code);
        const refusing = new RecordingHandler({
          execute: async () => {
            throw svcError(code);
          },
        });
        const first = newCall({ idempotencyKey: key });
        const failure = await refusal(run(first, refusing));
        expectFailure(failure, code, status, connectCode);
        const record = await database.db
          .collection<{ _id: string; response: { status: number; request_id: string } }>("idempotency_keys")
          .findOne({ _id: `${projectId}|test|${key}` });
        expect([record?.response.status, record?.response.request_id]).to.deep.equal([status, first.requestId]);
        expect(reported).to.deep.equal([]);
        expect(failure.headers).not.to.have.property("Idempotent-Replayed");

        const again = new RecordingHandler();
        const second = newCall({ idempotencyKey: key });
        const replayed = await refusal(run(second, again));
        expectFailure(replayed, code, status, connectCode);
        expect(again.executed).to.have.length(0);
        expect(again.replays).to.have.length(0);
        expect(replayed.headers["X-Request-Id"]).to.equal(first.requestId);
        expect(replayed.headers["Idempotent-Replayed"]).to.equal("true");
        expect(replayed.headers["X-RateLimit-Limit"]).to.equal(String(DEFAULT_RATE_LIMIT));
        expect(reported).to.deep.equal([]);
      });
    }

    it("settles a 422 validation error as the idempotency policy says: replayed with its param, or a retry runs", async () => {
      const key = uniqueKey("validation");
      const refusing = new RecordingHandler({
        execute: async () => {
          throw svcError("validation_error", "terms_acceptance.version must be a string.", { param: "terms_acceptance.version" });
        },
      });
      const first = newCall({ idempotencyKey: key });
      const failure = await refusal(run(first, refusing));
      expectFailure(failure, "validation_error", 422, Code.InvalidArgument);
      expect(failure.described.param).to.equal("terms_acceptance.version");
      expect(reported).to.deep.equal([]);

      const again = new RecordingHandler();
      const second = newCall({ idempotencyKey: key });
      if (IdempotencyGuard.isReplayable(422)) {
        const replayed = await refusal(run(second, again));
        expect(again.executed).to.have.length(0);
        expect(replayed.described.code).to.equal("validation_error");
        expect(replayed.described.param).to.equal("terms_acceptance.version");
        expect(replayed.described.message).to.equal("terms_acceptance.version must be a string.");
        expect(replayed.headers["X-Request-Id"]).to.equal(first.requestId);
      } else {
        // A refusal before the operation ran keeps nothing: the corrected retry runs.
        await run(second, again);
        expect(again.executed).to.have.length(1);
        expect(second.headers).not.to.have.property("Idempotent-Replayed");
        expect(second.headers["X-Request-Id"]).to.equal(second.requestId);
      }
    });
  });

  describe("when the gate itself fails", () => {
    it("answers internal_error with the uncounted quota headers and reports the failure", async () => {
      const outage = new Error("connection refused");
      const failingLimiter = {
        consume: async () => {
          throw outage;
        },
        uncounted: (limit: number) => ({ limit, remaining: limit, resetSeconds: 55, exceeded: false }),
      } as unknown as RateLimiter;
      const authenticator = { authenticate: async () => Promise.reject(svcError("missing_api_key")) } as unknown as ApiKeyAuthenticator;
      const failingPipeline = new CallPipeline({
        gate: new RequestGate(authenticator, failingLimiter, 77),
        idempotency,
        registry,
        onInternalError: (error, requestId) => reported.push({ error, requestId }),
      });
      const call = failingPipeline.newCall({
        requestId: "req_outage",
        door: "rest",
        method: UsersService.method.createUser,
        caller: { kind: "bearer", authorization: undefined },
        version: undefined,
        clientAddress: "192.0.2.9",
        idempotencyKey: undefined,
        takesIdempotencyKey: true,
        ...contextOf(UsersService.method.createUser),
      });
      const handler = new RecordingHandler();
      handler.call = call;
      const failure = await refusal(failingPipeline.run(call, handler));
      expectFailure(failure, "internal_error", 500, Code.Internal);
      expect(failure.headers).to.include({
        "X-Request-Id": "req_outage",
        "X-RateLimit-Limit": "77",
        "X-RateLimit-Remaining": "77",
        "X-RateLimit-Reset": "55",
      });
      expect(reported).to.deep.equal([{ error: outage, requestId: "req_outage" }]);

      // refuseAnonymous still answers its own refusal when counting fails, and reports the outage.
      const anonymous = await failingPipeline.refuseAnonymous("req_anon", "192.0.2.9", svcError("route_not_found"));
      expect(anonymous.described.code).to.equal("route_not_found");
      expect(anonymous.headers).to.include({ "X-Request-Id": "req_anon", "X-RateLimit-Limit": "77" });
      expect(reported.map((r) => r.requestId)).to.deep.equal(["req_outage", "req_anon"]);
    });
  });

  describe("anonymous routes", () => {
    it("admits a known version with the address's quota headers, and refuses an unknown one", async () => {
      const headers = await pipeline.admitAnonymous("req_doc", "198.51.100.7", VERSION);
      expect(headers).to.include({
        "X-Request-Id": "req_doc",
        "X-API-Version": VERSION,
        "X-RateLimit-Limit": String(DEFAULT_RATE_LIMIT),
        "X-RateLimit-Reset": RESET_SECONDS,
      });
      const failure = await refusal(pipeline.admitAnonymous("req_doc2", "198.51.100.7", "1999-01-01"));
      expectFailure(failure, "unsupported_version", 400, Code.InvalidArgument);
      expect(failure.headers["X-Request-Id"]).to.equal("req_doc2");
      expect(failure.headers["X-RateLimit-Limit"]).to.equal(String(DEFAULT_RATE_LIMIT));
    });

    it("refuses a request with no route with its own error and the address's quota headers", async () => {
      const failure = await pipeline.refuseAnonymous("req_noroute", "198.51.100.8", svcError("route_not_found"));
      expectFailure(failure, "route_not_found", 404, Code.NotFound);
      expect(failure.headers).to.include({
        "X-Request-Id": "req_noroute",
        "X-RateLimit-Limit": String(DEFAULT_RATE_LIMIT),
        "X-RateLimit-Reset": RESET_SECONDS,
      });
      expect(reported).to.deep.equal([]);
    });
  });
});
