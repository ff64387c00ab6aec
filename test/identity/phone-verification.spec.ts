// Phone verification (docs/contract.md, Phone verification) over REST and a stock gRPC client: the object,
// the limits with the injected clock, the check order, sandbox rehearsal and exact counting under concurrency.
import { expect } from "chai";
import type { SimulatedSmsSender } from "../../src/identity/sms-sender.ts";
import { expectError } from "../support/errors.ts";
import { bearer, grpc, GrpcTestClient } from "../support/grpc-client.ts";
import { uniquePhone, uniquePhoneEnding } from "../support/phones.ts";
import { rememberSensitive } from "../support/sensitive-values.ts";
import { createKey, createProject } from "../support/tenancy.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

const T0 = Date.parse("2026-11-22T08:00:00.000Z");

describe("phone verification", function () {
  this.timeout(30_000);
  let svc: TestService;
  let now = T0;
  let sms: SimulatedSmsSender;
  let rpc: GrpcTestClient;

  before(async () => {
    svc = await startTestService({ clock: () => new Date(now) });
    sms = svc.app.smsSender as SimulatedSmsSender;
    rpc = new GrpcTestClient(svc.grpcAddress);
  });
  after(async () => {
    rpc.close();
    await svc.stop();
  });
  beforeEach(() => {
    now += 2 * 60 * 60 * 1000; // every test starts with fresh hourly windows
  });

  async function user(key: string, phone = uniquePhone()): Promise<{ id: string; phone: string }> {
    const created = await svc.request("POST", "/v1/users", { key, body: { phone } });
    expect(created.status, created.text).to.equal(201);
    return { id: created.body.id, phone };
  }
  const start = (key: string, id: string, body: unknown = {}) => svc.request("POST", `/v1/users/${id}/verification`, { key, body });
  const check = (key: string, id: string, code: string) => svc.request("POST", `/v1/users/${id}/verification/check`, { key, body: { code } });
  const latestCode = (phone: string): string => {
    const messages = sms.sentTo(phone);
    const code = /(\d{6})/.exec(messages[messages.length - 1]?.body ?? "")?.[1];
    expect(code, `an SMS to ${phone}`).to.be.a("string");
    rememberSensitive(code!);
    return code!;
  };

  describe("sandbox", () => {
    it("runs the whole flow with 000000 and no SMS, although sandbox users are verified", async () => {
      const u = await user(svc.sandboxKey);
      const sent = sms.messages.length;
      const started = await start(svc.sandboxKey, u.id, { channel: "sms" });
      expect(started.status, started.text).to.equal(200);
      expect(started.body).to.deep.equal({
        object: "phone_verification",
        user_id: u.id,
        phone: u.phone,
        channel: "sms",
        status: "pending",
        attempts_remaining: 5,
        expires_at: new Date(now + 10 * 60 * 1000).toISOString(),
        resend_available_at: new Date(now + 30 * 1000).toISOString(),
        sends_remaining: 4,
        livemode: false,
        created_at: new Date(now).toISOString(),
        updated_at: new Date(now).toISOString(),
      });
      expect(sms.messages.length).to.equal(sent);
      const wrong = await check(svc.sandboxKey, u.id, "123456");
      expectError(wrong, 422, "invalid_request_error", "invalid_verification_code");
      expect(wrong.body.error.message).to.equal("Wrong code; 4 attempts remaining.");
      const ok = await check(svc.sandboxKey, u.id, "000000");
      expect(ok.status, ok.text).to.equal(200);
      expect(ok.body.status).to.equal("approved");
      expect(ok.body.attempts_remaining).to.equal(4);
      expectError(await check(svc.sandboxKey, u.id, "000000"), 409, "invalid_request_error", "no_pending_verification");
      const latest = await svc.request("GET", `/v1/users/${u.id}/verification`);
      expect(latest.status).to.equal(200);
      expect(latest.body.status).to.equal("approved");
      expect((await svc.request("GET", `/v1/users/${u.id}`)).body.verified).to.equal(true);
    });

    it("answers 503 verification_unavailable with Retry-After on every send to a phone ending in 0503, using nothing up", async () => {
      const u = await user(svc.sandboxKey, uniquePhoneEnding("0503"));
      for (let i = 0; i < 3; i++) {
        const refused = await start(svc.sandboxKey, u.id);
        expectError(refused, 503, "api_error", "verification_unavailable");
        expect(refused.headers.get("retry-after")).to.equal("30");
      }
      expectError(await svc.request("GET", `/v1/users/${u.id}/verification`), 409, "invalid_request_error", "no_pending_verification");
      expectError(await check(svc.sandboxKey, u.id, "000000"), 409, "invalid_request_error", "no_pending_verification");
    });

    it("limits sends: 30 s between sends and 5 per rolling hour, with the exact Retry-After; the quota headers stay the key's", async () => {
      const u = await user(svc.sandboxKey);
      expect((await start(svc.sandboxKey, u.id)).status).to.equal(200);
      now += 10_500;
      const early = await start(svc.sandboxKey, u.id);
      expectError(early, 429, "rate_limit_error", "rate_limit_exceeded");
      expect(early.headers.get("retry-after")).to.equal("20");
      expect(Number(early.headers.get("x-ratelimit-limit"))).to.be.greaterThan(5);
      expect(Number(early.headers.get("x-ratelimit-remaining"))).to.be.greaterThan(0);
      const first = now - 10_500;
      // Sends 2 to 5, each 30 s after the previous one.
      for (let i = 1; i < 5; i++) {
        now = first + i * 30_000;
        const sent = await start(svc.sandboxKey, u.id);
        expect(sent.status, sent.text).to.equal(200);
        expect(sent.body.sends_remaining).to.equal(4 - i);
      }
      now = first + 5 * 30_000;
      const hourly = await start(svc.sandboxKey, u.id);
      expectError(hourly, 429, "rate_limit_error", "rate_limit_exceeded");
      // The first send leaves the window 3,600 s after it was made.
      expect(hourly.headers.get("retry-after")).to.equal(String(3600 - 150));
      const latest = await svc.request("GET", `/v1/users/${u.id}/verification`);
      expect(latest.body.sends_remaining).to.equal(0);
      expect(latest.body.resend_available_at).to.equal(new Date(first + 3_600_000).toISOString());
      now = first + 3_600_000;
      expect((await start(svc.sandboxKey, u.id)).status).to.equal(200);
    });

    it("expires a code after 10 minutes (a wrong code then uses no attempt), and a start then issues a new code with 5 attempts", async () => {
      const u = await user(svc.sandboxKey);
      await start(svc.sandboxKey, u.id);
      expectError(await check(svc.sandboxKey, u.id, "111111"), 422, "invalid_request_error", "invalid_verification_code");
      now += 10 * 60 * 1000;
      expectError(await check(svc.sandboxKey, u.id, "000000"), 422, "invalid_request_error", "verification_expired");
      expectError(await check(svc.sandboxKey, u.id, "111111"), 422, "invalid_request_error", "verification_expired");
      const expired = await svc.request("GET", `/v1/users/${u.id}/verification`);
      expect([expired.body.status, expired.body.attempts_remaining]).to.deep.equal(["expired", 4]);
      const again = await start(svc.sandboxKey, u.id);
      expect(again.body.status).to.equal("pending");
      expect(again.body.attempts_remaining).to.equal(5);
      expect(again.body.expires_at).to.equal(new Date(now + 600_000).toISOString());
    });

    it("counts five parallel wrong checks exactly, then refuses every check until a new code", async () => {
      const u = await user(svc.sandboxKey);
      await start(svc.sandboxKey, u.id);
      const answers = await Promise.all(Array.from({ length: 5 }, () => check(svc.sandboxKey, u.id, "999999")));
      for (const a of answers) expectError(a, 422, "invalid_request_error", "invalid_verification_code");
      expect(answers.map((a) => a.body.error.message).sort()).to.deep.equal([0, 1, 2, 3, 4].map((n) => `Wrong code; ${n} attempts remaining.`));
      const latest = await svc.request("GET", `/v1/users/${u.id}/verification`);
      expect(latest.body.attempts_remaining).to.equal(0);
      expect(latest.body.status).to.equal("max_attempts_reached");
      expectError(await check(svc.sandboxKey, u.id, "000000"), 422, "invalid_request_error", "verification_attempts_exceeded");
      // A wrong code too: no attempt is left to judge it with.
      expectError(await check(svc.sandboxKey, u.id, "999999"), 422, "invalid_request_error", "verification_attempts_exceeded");
      now += 30_000;
      const fresh = await start(svc.sandboxKey, u.id);
      expect(fresh.body.attempts_remaining).to.equal(5);
      expect((await check(svc.sandboxKey, u.id, "000000")).status).to.equal(200);
    });

    it("of twenty parallel right checks approves exactly one; the others are 409 no_pending_verification", async () => {
      const u = await user(svc.sandboxKey);
      await start(svc.sandboxKey, u.id);
      const answers = await Promise.all(Array.from({ length: 20 }, () => check(svc.sandboxKey, u.id, "000000")));
      expect(answers.filter((a) => a.status === 200)).to.have.length(1);
      for (const a of answers.filter((x) => x.status !== 200)) expectError(a, 409, "invalid_request_error", "no_pending_verification");
    });

    it("checks expiry before attempts, and an approval before expiry (REST and gRPC)", async () => {
      const sandbox = bearer(svc.sandboxKey);
      const spent = await user(svc.sandboxKey);
      await start(svc.sandboxKey, spent.id);
      for (let i = 0; i < 5; i++)
        expectError(await check(svc.sandboxKey, spent.id, "111111"), 422, "invalid_request_error", "invalid_verification_code");
      expectError(await check(svc.sandboxKey, spent.id, "000000"), 422, "invalid_request_error", "verification_attempts_exceeded");
      now += 10 * 60 * 1000;
      // Out of attempts and expired: expired.
      expectError(await check(svc.sandboxKey, spent.id, "000000"), 422, "invalid_request_error", "verification_expired");
      await rpc.fails("PhoneVerificationService", "CheckPhoneVerification", { user_id: spent.id, code: "000000" }, sandbox, {
        code: grpc.status.INVALID_ARGUMENT,
        reason: "verification_expired",
      });

      const done = await user(svc.sandboxKey);
      await start(svc.sandboxKey, done.id);
      expect((await check(svc.sandboxKey, done.id, "000000")).status).to.equal(200);
      now += 10 * 60 * 1000;
      // Approved, then past its expiry: nothing is pending, which is what a check hears.
      expectError(await check(svc.sandboxKey, done.id, "000000"), 409, "invalid_request_error", "no_pending_verification");
      await rpc.fails("PhoneVerificationService", "CheckPhoneVerification", { user_id: done.id, code: "000000" }, sandbox, {
        code: grpc.status.FAILED_PRECONDITION,
        reason: "no_pending_verification",
      });
      expect((await svc.request("GET", `/v1/users/${done.id}/verification`)).body.status).to.equal("approved");
    });

    it("validates before looking up: code and channel are 422, then an unknown user is 404", async () => {
      expectError(await check(svc.sandboxKey, "999999999", "12345"), 422, "invalid_request_error", "validation_error", "code");
      expectError(await check(svc.sandboxKey, "999999999", "abcdef"), 422, "invalid_request_error", "validation_error", "code");
      expectError(await start(svc.sandboxKey, "999999999", { channel: "voice" }), 422, "invalid_request_error", "validation_error", "channel");
      expectError(await start(svc.sandboxKey, "999999999"), 404, "invalid_request_error", "user_not_found");
      expectError(await check(svc.sandboxKey, "999999999", "000000"), 404, "invalid_request_error", "user_not_found");
      expectError(await svc.request("GET", "/v1/users/999999999/verification"), 404, "invalid_request_error", "user_not_found");
      const u = await user(svc.sandboxKey);
      expectError(await check(svc.sandboxKey, u.id, "000000"), 409, "invalid_request_error", "no_pending_verification");
    });
  });

  describe("live", () => {
    it("sends the code by SMS, re-sends the same code keeping the attempts, stores only an HMAC and verifies the user", async () => {
      const u = await user(svc.liveKey);
      const started = await start(svc.liveKey, u.id);
      expect(started.status, started.text).to.equal(200);
      expect(started.body.livemode).to.equal(true);
      const code = latestCode(u.phone);
      const wrong = code === "000000" ? "000001" : "000000";
      expectError(await check(svc.liveKey, u.id, wrong), 422, "invalid_request_error", "invalid_verification_code");
      now += 30_000;
      const resent = await start(svc.liveKey, u.id);
      expect(resent.body.attempts_remaining).to.equal(4);
      expect(resent.body.expires_at).to.equal(started.body.expires_at);
      expect(latestCode(u.phone)).to.equal(code);
      expect(sms.sentTo(u.phone)).to.have.length(2);
      const stored = await svc.database.db.collection("users").findOne({ _id: u.id as never });
      expect(JSON.stringify(stored)).not.to.include(code);
      expect(JSON.stringify(started.body)).not.to.include(code);
      const approved = await check(svc.liveKey, u.id, code);
      expect(approved.status, approved.text).to.equal(200);
      expect((await svc.request("GET", `/v1/users/${u.id}`, { key: svc.liveKey })).body.verified).to.equal(true);
      // Verified: a start is 409 already_verified; a further check is no_pending_verification.
      expectError(await start(svc.liveKey, u.id), 409, "invalid_request_error", "already_verified");
      expectError(await check(svc.liveKey, u.id, code), 409, "invalid_request_error", "no_pending_verification");
    });

    it("answers 503 with Retry-After when the SMS provider fails, and uses nothing up", async () => {
      const u = await user(svc.liveKey);
      sms.failNext(1);
      const failed = await start(svc.liveKey, u.id);
      expectError(failed, 503, "api_error", "verification_unavailable");
      expect(failed.headers.get("retry-after")).to.equal("30");
      expectError(
        await svc.request("GET", `/v1/users/${u.id}/verification`, { key: svc.liveKey }),
        409,
        "invalid_request_error",
        "no_pending_verification",
      );
      const retried = await start(svc.liveKey, u.id);
      expect(retried.status, retried.text).to.equal(200);
      expect(retried.body.sends_remaining).to.equal(4);
    });

    it("answers already_verified after validation and before the send limit, and the send limit before the SMS provider", async () => {
      const verified = await user(svc.liveKey);
      await start(svc.liveKey, verified.id);
      expect((await check(svc.liveKey, verified.id, latestCode(verified.phone))).status).to.equal(200);
      // Within 30 s of the last send: already_verified, not 429.
      expectError(await start(svc.liveKey, verified.id), 409, "invalid_request_error", "already_verified");
      expectError(await start(svc.liveKey, verified.id, { channel: "voice" }), 422, "invalid_request_error", "validation_error", "channel");
      expectError(await check(svc.liveKey, verified.id, "12"), 422, "invalid_request_error", "validation_error", "code");

      const u = await user(svc.liveKey);
      expect((await start(svc.liveKey, u.id)).body.sends_remaining).to.equal(4);
      const code = latestCode(u.phone);
      sms.failNext(1);
      // Refused by the send limit before the provider is asked: its armed failure is still there afterwards.
      expectError(await start(svc.liveKey, u.id), 429, "rate_limit_error", "rate_limit_exceeded");
      now += 30_000;
      expectError(await start(svc.liveKey, u.id), 503, "api_error", "verification_unavailable");
      expect(sms.sentTo(u.phone)).to.have.length(1);
      const resent = await start(svc.liveKey, u.id);
      expect(resent.status, resent.text).to.equal(200);
      expect(resent.body.sends_remaining).to.equal(3);
      expect(latestCode(u.phone)).to.equal(code);
    });

    it("refuses live keys of a project without the setting with 403 before validation and lookups", async () => {
      const project = await createProject(svc, { liveEnabled: true });
      const key = (await createKey(svc, project.projectId, { livemode: true })).secret;
      expectError(await start(key, "999999999", { channel: "voice" }), 403, "permission_error", "live_feature_unavailable");
      expectError(await check(key, "999999999", "bad"), 403, "permission_error", "live_feature_unavailable");
      expectError(await svc.request("GET", "/v1/users/999999999/verification", { key }), 403, "permission_error", "live_feature_unavailable");
      // The setting lifts the refusal at once (a change made through this process clears the settings cache).
      await svc.admin.updateProject({ id: project.projectId, livePhoneVerificationEnabled: true });
      expectError(await start(key, "999999999"), 404, "invalid_request_error", "user_not_found");
      const u = await user(key);
      expect((await start(key, u.id)).status).to.equal(200);
      const projects = await svc.admin.createProject({ organizationId: project.organizationId, name: "Defaults" });
      expect(projects.project!.livePhoneVerificationEnabled).to.equal(false);
      expect(projects.project!.liveKycEnabled).to.equal(false);
    });
  });

  describe("over gRPC", () => {
    it("answers the same codes in the same order", async () => {
      const project = await createProject(svc, { liveEnabled: true });
      const live = (await createKey(svc, project.projectId, { livemode: true })).secret;
      // Before validation and before the lookup, on every method.
      for (const [method, request] of [
        ["CheckPhoneVerification", { user_id: "999999999", code: "x" }],
        ["StartPhoneVerification", { user_id: "999999999", channel: "voice" }],
        ["GetPhoneVerification", { user_id: "999999999" }],
      ] as const) {
        await rpc.fails("PhoneVerificationService", method, request, bearer(live), {
          code: grpc.status.PERMISSION_DENIED,
          reason: "live_feature_unavailable",
        });
      }
      const sandbox = bearer(svc.sandboxKey);
      await rpc.fails("PhoneVerificationService", "CheckPhoneVerification", { user_id: "999999999", code: "x" }, sandbox, {
        code: grpc.status.INVALID_ARGUMENT,
        reason: "validation_error",
        param: "code",
      });
      await rpc.fails("PhoneVerificationService", "StartPhoneVerification", { user_id: "999999999" }, sandbox, {
        code: grpc.status.NOT_FOUND,
        reason: "user_not_found",
      });
      const u = await user(svc.sandboxKey);
      await rpc.fails("PhoneVerificationService", "GetPhoneVerification", { user_id: u.id }, sandbox, {
        code: grpc.status.FAILED_PRECONDITION,
        reason: "no_pending_verification",
      });
      const started = await rpc.ok("PhoneVerificationService", "StartPhoneVerification", { user_id: u.id }, sandbox);
      expect(started.message.phone_verification.status).to.equal("pending");
      const early = await rpc.fails("PhoneVerificationService", "StartPhoneVerification", { user_id: u.id }, sandbox, {
        code: grpc.status.RESOURCE_EXHAUSTED,
        reason: "rate_limit_exceeded",
      });
      expect(String(early.metadata.get("retry-after")[0])).to.equal("30");
      await rpc.fails("PhoneVerificationService", "CheckPhoneVerification", { user_id: u.id, code: "123456" }, sandbox, {
        code: grpc.status.INVALID_ARGUMENT,
        reason: "invalid_verification_code",
      });
      now += 10 * 60 * 1000;
      await rpc.fails("PhoneVerificationService", "CheckPhoneVerification", { user_id: u.id, code: "000000" }, sandbox, {
        code: grpc.status.INVALID_ARGUMENT,
        reason: "verification_expired",
      });
      now += 30_000;
      await rpc.ok("PhoneVerificationService", "StartPhoneVerification", { user_id: u.id }, sandbox);
      for (let i = 0; i < 5; i++) {
        await rpc.fails("PhoneVerificationService", "CheckPhoneVerification", { user_id: u.id, code: "123456" }, sandbox, {
          code: grpc.status.INVALID_ARGUMENT,
          reason: "invalid_verification_code",
        });
      }
      await rpc.fails("PhoneVerificationService", "CheckPhoneVerification", { user_id: u.id, code: "000000" }, sandbox, {
        code: grpc.status.INVALID_ARGUMENT,
        reason: "verification_attempts_exceeded",
      });
      const u503 = await user(svc.sandboxKey, uniquePhoneEnding("0503"));
      await rpc.fails("PhoneVerificationService", "StartPhoneVerification", { user_id: u503.id }, sandbox, {
        code: grpc.status.UNAVAILABLE,
        reason: "verification_unavailable",
      });
      const lu = await user(svc.liveKey);
      await rpc.ok("PhoneVerificationService", "StartPhoneVerification", { user_id: lu.id }, bearer(svc.liveKey));
      const approved = await rpc.ok(
        "PhoneVerificationService",
        "CheckPhoneVerification",
        { user_id: lu.id, code: latestCode(lu.phone) },
        bearer(svc.liveKey),
      );
      expect(approved.message.phone_verification.status).to.equal("approved");
      now += 30_000;
      await rpc.fails("PhoneVerificationService", "StartPhoneVerification", { user_id: lu.id }, bearer(svc.liveKey), {
        code: grpc.status.FAILED_PRECONDITION,
        reason: "already_verified",
      });
    });
  });
});
