// The public services through a stock @grpc/grpc-js client built from the .proto files over h2c: calls,
// response headers, errors with google.rpc.ErrorInfo, rate limits and the idempotency-key metadata.
import { expect } from "chai";
import { bearer, grpc, GrpcTestClient } from "../support/grpc-client.ts";
import { expectStandardHeaders } from "../support/headers.ts";
import { createKey } from "../support/tenancy.ts";
import { uniquePhone } from "../support/phones.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

describe("gRPC with a stock grpc-js client", () => {
  let svc: TestService;
  let client: GrpcTestClient;
  before(async () => {
    svc = await startTestService();
    client = new GrpcTestClient(svc.grpcAddress);
  });
  after(async () => {
    client.close();
    await svc.stop();
  });

  it("creates a user and reads it back, with the five headers", async () => {
    const phone = uniquePhone();
    const created = await client.ok("UsersService", "CreateUser", { phone, email: "Grpc@Example.com" }, bearer(svc.sandboxKey));
    expect(created.message.user.phone).to.equal(phone);
    expect(created.message.user.id).to.match(/^[1-9]\d{8}$/);
    expect(created.message.user.verified).to.equal(true);
    expectStandardHeaders(created.header, "CreateUser");

    const read = await client.ok("UsersService", "GetUser", { id: created.message.user.id }, bearer(svc.sandboxKey));
    expect(read.message.user).to.deep.equal(created.message.user);
    expect(read.message.profile.email).to.equal("grpc@example.com");
    expectStandardHeaders(read.header, "GetUser");

    // The same user over REST: one core, two transports.
    const rest = await svc.request("GET", `/v1/users/${created.message.user.id}`);
    expect(rest.body.phone).to.equal(phone);
  });

  it("keeps environments apart: a live key does not see a sandbox user", async () => {
    const created = await client.ok("UsersService", "CreateUser", { phone: uniquePhone() }, bearer(svc.sandboxKey));
    await client.fails("UsersService", "GetUser", { id: created.message.user.id }, bearer(svc.liveKey), {
      code: grpc.status.NOT_FOUND,
      reason: "user_not_found",
    });
  });

  it("decodes a validation error's ErrorInfo with its param", async () => {
    const failure = await client.fails("UsersService", "CreateUser", { phone: "12345" }, bearer(svc.sandboxKey), {
      code: grpc.status.INVALID_ARGUMENT,
      reason: "validation_error",
      param: "phone",
    });
    expectStandardHeaders(failure.metadata, "validation_error");
  });

  it("tells an empty event_type_list from a missing one on endpoint creation; the deprecated event_types still works", async () => {
    const create = (request: object) => client.call("WebhookEndpointsService", "CreateWebhookEndpoint", request, bearer(svc.sandboxKey));
    await client.fails(
      "WebhookEndpointsService",
      "CreateWebhookEndpoint",
      { url: "http://127.0.0.1:9/grpc-empty", event_type_list: { values: [] } },
      bearer(svc.sandboxKey),
      { code: grpc.status.INVALID_ARGUMENT, reason: "validation_error", param: "event_types" },
    );
    const listed = await create({ url: "http://127.0.0.1:9/grpc-listed", event_type_list: { values: ["kyc.approved"] } });
    expect(listed.ok && listed.reply.message.webhook_endpoint.event_types).to.deep.equal(["kyc.approved"]);
    const legacy = await create({ url: "http://127.0.0.1:9/grpc-legacy", event_types: [] });
    expect(legacy.ok && legacy.reply.message.webhook_endpoint.event_types).to.deep.equal(["*"]);
  });

  it("answers RESOURCE_EXHAUSTED rate_limit_exceeded with retry-after once the key's quota is used", async () => {
    const { secret } = await createKey(svc, svc.projectId, { rateLimit: 2 });
    await client.ok("EventsService", "ListEvents", {}, bearer(secret));
    const last = await client.ok("EventsService", "ListEvents", {}, bearer(secret));
    expect(String(last.header.get("x-ratelimit-remaining")[0])).to.equal("0");
    const failure = await client.fails("EventsService", "ListEvents", {}, bearer(secret), {
      code: grpc.status.RESOURCE_EXHAUSTED,
      reason: "rate_limit_exceeded",
    });
    const retryAfter = String(failure.metadata.get("retry-after")[0]);
    expect(retryAfter).to.match(/^[1-9]\d*$/);
    expect(Number(retryAfter)).to.be.at.most(60);
  });

  describe("idempotency-key metadata", () => {
    const create = (key: string, request: object, apiKey = svc.sandboxKey) =>
      client.call("UsersService", "CreateUser", request, { ...bearer(apiKey), "idempotency-key": key });

    it("replays the first response with its x-request-id and idempotent-replayed: true", async () => {
      const request = { phone: uniquePhone() };
      const first = await client.ok("UsersService", "CreateUser", request, { ...bearer(svc.sandboxKey), "idempotency-key": "grpc-replay-1" });
      const second = await client.ok("UsersService", "CreateUser", request, { ...bearer(svc.sandboxKey), "idempotency-key": "grpc-replay-1" });
      expect(second.message).to.deep.equal(first.message);
      expect(second.header.get("x-request-id")).to.deep.equal(first.header.get("x-request-id"));
      expect(second.header.get("idempotent-replayed")).to.deep.equal(["true"]);
      expectStandardHeaders(second.header, "replay");
    });

    it("replays over the Connect protocol (JSON on PORT) as well", async () => {
      const call = () =>
        svc.request("POST", "/svc.v1.UsersService/CreateUser", {
          body: { phone: "+14155557999" },
          headers: { "idempotency-key": "connect-replay-1" },
        });
      const first = await call();
      const second = await call();
      expect([first.status, second.status]).to.deep.equal([200, 200]);
      expect(second.headers.get("content-type")).to.equal("application/json");
      expect(second.body).to.deep.equal(first.body);
      expect(second.headers.get("x-request-id")).to.equal(first.headers.get("x-request-id"));
      expect(second.headers.get("idempotent-replayed")).to.equal("true");
    });

    it("replays a stored business error (409), and stores no validation error", async () => {
      const phone = uniquePhone();
      expect((await create("grpc-error-0", { phone })).ok).to.equal(true);
      const conflict = { code: grpc.status.ALREADY_EXISTS, reason: "user_already_exists", param: "phone" };
      const first = await client.fails(
        "UsersService",
        "CreateUser",
        { phone },
        { ...bearer(svc.sandboxKey), "idempotency-key": "grpc-error-1" },
        conflict,
      );
      const second = await client.fails(
        "UsersService",
        "CreateUser",
        { phone },
        { ...bearer(svc.sandboxKey), "idempotency-key": "grpc-error-1" },
        conflict,
      );
      expect(second.metadata.get("x-request-id")).to.deep.equal(first.metadata.get("x-request-id"));
      expect(second.metadata.get("idempotent-replayed")).to.deep.equal(["true"]);

      await client.fails(
        "UsersService",
        "CreateUser",
        { phone: "not a phone" },
        { ...bearer(svc.sandboxKey), "idempotency-key": "grpc-error-2" },
        {
          code: grpc.status.INVALID_ARGUMENT,
          reason: "validation_error",
          param: "phone",
        },
      );
      const corrected = await client.ok(
        "UsersService",
        "CreateUser",
        { phone: uniquePhone() },
        { ...bearer(svc.sandboxKey), "idempotency-key": "grpc-error-2" },
      );
      expect(corrected.header.get("idempotent-replayed")).to.deep.equal([]);
    });

    it("answers INVALID_ARGUMENT idempotency_key_reuse for another request under the same key", async () => {
      const first = await create("grpc-reuse-1", { phone: uniquePhone() });
      expect(first.ok).to.equal(true);
      await client.fails(
        "UsersService",
        "CreateUser",
        { phone: uniquePhone() },
        { ...bearer(svc.sandboxKey), "idempotency-key": "grpc-reuse-1" },
        {
          code: grpc.status.INVALID_ARGUMENT,
          reason: "idempotency_key_reuse",
        },
      );
    });

    it("runs concurrent duplicates once: the others get ABORTED idempotency_in_progress or the replay", async () => {
      const request = { phone: uniquePhone() };
      const outcomes = await Promise.all(Array.from({ length: 10 }, () => create("grpc-concurrent-1", request)));
      const executed = outcomes.filter((o) => o.ok && o.reply.header.get("idempotent-replayed").length === 0);
      expect(executed).to.have.length(1);
      for (const outcome of outcomes) {
        if (outcome.ok) {
          expect(outcome.reply.message).to.deep.equal((executed[0] as typeof outcome).reply.message);
        } else {
          expect(grpc.status[outcome.failure.code]).to.equal("ABORTED");
          expect(outcome.failure.info.reason).to.equal("idempotency_in_progress");
        }
      }
      const events = await svc.request("GET", "/v1/events?type=user.created&limit=100");
      const created = events.body.data.filter((e: { data: { object: { phone: string } } }) => e.data.object.phone === request.phone);
      expect(created).to.have.length(1);
    });

    it("scopes keys per environment: the same key runs in sandbox and in live", async () => {
      const request = { phone: uniquePhone() };
      const sandbox = await client.ok("UsersService", "CreateUser", request, { ...bearer(svc.sandboxKey), "idempotency-key": "grpc-scoped-1" });
      const live = await client.ok("UsersService", "CreateUser", request, { ...bearer(svc.liveKey), "idempotency-key": "grpc-scoped-1" });
      expect(live.header.get("idempotent-replayed")).to.deep.equal([]);
      expect(live.message.user.livemode).to.equal(true);
      expect(sandbox.message.user.livemode).not.to.equal(true);
    });
  });
});

describe("gRPC idempotency keys expire after 24 hours", () => {
  let now = Date.parse("2026-11-20T09:00:00.000Z");
  let svc: TestService;
  let client: GrpcTestClient;
  before(async () => {
    svc = await startTestService({ clock: () => new Date(now) });
    client = new GrpcTestClient(svc.grpcAddress);
  });
  after(async () => {
    client.close();
    await svc.stop();
  });

  it("replays until then, and runs another request under the key afterwards", async () => {
    const metadata = { ...bearer(svc.sandboxKey), "idempotency-key": "grpc-expiry-1" };
    const request = { phone: uniquePhone() };
    const first = await client.ok("UsersService", "CreateUser", request, metadata);
    now += 24 * 60 * 60 * 1000 - 1000;
    const replay = await client.ok("UsersService", "CreateUser", request, metadata);
    expect(replay.header.get("idempotent-replayed")).to.deep.equal(["true"]);
    expect(replay.message).to.deep.equal(first.message);
    now += 2000;
    const fresh = await client.ok("UsersService", "CreateUser", { phone: uniquePhone() }, metadata);
    expect(fresh.header.get("idempotent-replayed")).to.deep.equal([]);
    expect(fresh.message.user.id).not.to.equal(first.message.user.id);
  });
});
