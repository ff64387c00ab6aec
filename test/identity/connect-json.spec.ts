// The identity methods as the Connect protocol puts them on the wire, read without connect-es (which accepts either
// spelling and hides the HTTP status): POST /<package>.<Service>/<Method> with a JSON body on PORT. Answers name
// fields as the proto does (snake_case); a refusal is Connect's error JSON with the HTTP status of its Connect code
// and one ErrorInfo detail carrying the Svc code, in the same order as REST. Project settings are changed with
// AdminService's own Connect JSON (`live_kyc_enabled`, `live_phone_verification_enabled`).
import { expect } from "chai";
import { expectConnectError } from "../support/errors.ts";
import { uniquePhone, uniquePhoneEnding } from "../support/phones.ts";
import { createKey, createOtherProject, createProject } from "../support/tenancy.ts";
import { startTestService, type RestResponse, type TestService } from "../support/test-service.ts";

const MINUTE = 60 * 1000;
const UNKNOWN_USER = "999999999";

describe("identity in Connect JSON on the wire", function () {
  this.timeout(30_000);
  let svc: TestService;
  let now = Date.parse("2026-11-22T08:00:00.000Z");
  /** One Connect unary call in JSON, with `key` as bearer token (the sandbox key unless given). */
  const call = (method: string, body: unknown, key = svc.sandboxKey, headers: Record<string, string> = {}): Promise<RestResponse> =>
    svc.request("POST", `/${method.includes(".") ? method : `svc.v1.${method}`}`, { key, body, headers });
  const start = (userId: string, key = svc.sandboxKey, body: Record<string, unknown> = {}) =>
    call("PhoneVerificationService/StartPhoneVerification", { user_id: userId, ...body }, key);
  const check = (userId: string, code: string, key = svc.sandboxKey) =>
    call("PhoneVerificationService/CheckPhoneVerification", { user_id: userId, code }, key);
  const latest = (userId: string, key = svc.sandboxKey) => call("PhoneVerificationService/GetPhoneVerification", { user_id: userId }, key);
  const updateProject = (body: Record<string, unknown>) => call("svc.admin.v1.AdminService/UpdateProject", body, svc.adminToken);
  const newUser = async (key = svc.sandboxKey, phone = uniquePhone()): Promise<{ id: string; phone: string }> => {
    const created = await call("UsersService/CreateUser", { phone }, key);
    expect(created.status, created.text).to.equal(200);
    return { id: created.body.user.id, phone };
  };
  /** A live key of a new project, which has neither live setting. */
  const liveKeyWithoutSettings = async (): Promise<{ projectId: string; key: string }> => {
    const { projectId } = await createProject(svc, { liveEnabled: true });
    return { projectId, key: (await createKey(svc, projectId, { livemode: true })).secret };
  };

  before(async () => {
    svc = await startTestService({ clock: () => new Date(now) });
  });
  after(async () => {
    await svc.stop();
  });
  beforeEach(() => {
    now += 2 * 60 * MINUTE; // fresh hourly send windows
  });

  it("phone verification: start, check and latest in snake_case; refusals in REST's order, expiry before attempts", async () => {
    const u = await newUser();
    expectConnectError(await latest(u.id), 400, "failed_precondition", "no_pending_verification");
    const started = await start(u.id, svc.sandboxKey, { channel: "sms" });
    expect(started.status, started.text).to.equal(200);
    expect(started.body.phone_verification).to.include({
      user_id: u.id,
      phone: u.phone,
      channel: "sms",
      status: "pending",
      attempts_remaining: 5,
      sends_remaining: 4,
    });
    // Protobuf JSON writes timestamps without zero fractions.
    expect(Date.parse(started.body.phone_verification.expires_at)).to.equal(now + 10 * MINUTE);
    expect(Date.parse(started.body.phone_verification.resend_available_at)).to.equal(now + 30_000);
    expect(started.body.phone_verification).not.to.have.any.keys("userId", "attemptsRemaining", "expiresAt");
    expect(expectConnectError(await start(u.id), 429, "resource_exhausted", "rate_limit_exceeded").metadata.retry_after).to.equal("30");
    expectConnectError(await check(u.id, "12345"), 400, "invalid_argument", "validation_error", "code");
    for (let left = 4; left >= 0; left--) {
      const wrong = await check(u.id, "111111");
      expectConnectError(wrong, 400, "invalid_argument", "invalid_verification_code");
      expect(wrong.body.message).to.equal(`Wrong code; ${left} attempts remaining.`);
    }
    expectConnectError(await check(u.id, "000000"), 400, "invalid_argument", "verification_attempts_exceeded");
    now += 10 * MINUTE;
    // Out of attempts and expired: expiry is checked first.
    expectConnectError(await check(u.id, "000000"), 400, "invalid_argument", "verification_expired");

    const done = await newUser();
    await start(done.id);
    const approved = await check(done.id, "000000");
    expect(approved.status, approved.text).to.equal(200);
    expect(approved.body.phone_verification).to.include({ status: "approved", attempts_remaining: 5 });
    now += 10 * MINUTE;
    // Approved, then past its expiry: nothing is pending.
    expectConnectError(await check(done.id, "000000"), 400, "failed_precondition", "no_pending_verification");
    expect((await latest(done.id)).body.phone_verification.status).to.equal("approved");

    expectConnectError(await start(UNKNOWN_USER), 404, "not_found", "user_not_found");
    const unreachable = await newUser(svc.sandboxKey, uniquePhoneEnding("0503"));
    expect(expectConnectError(await start(unreachable.id), 503, "unavailable", "verification_unavailable").metadata.retry_after).to.equal("30");
  });

  it("live phone verification: 403 live_feature_unavailable on every method before validation and the lookup, until UpdateProject turns it on", async () => {
    const { projectId, key } = await liveKeyWithoutSettings();
    const refusedCalls = [() => start(UNKNOWN_USER, key, { channel: "voice" }), () => check(UNKNOWN_USER, "x", key), () => latest(UNKNOWN_USER, key)];
    for (const refused of refusedCalls) expectConnectError(await refused(), 403, "permission_denied", "live_feature_unavailable");
    const enabled = await updateProject({ id: projectId, live_phone_verification_enabled: true });
    expect(enabled.status, enabled.text).to.equal(200);
    expect(enabled.body.project).to.include({ id: projectId, live_phone_verification_enabled: true });
    expect(enabled.body.project.live_kyc_enabled ?? false).to.equal(false);
    // Lifted at once: the same calls now reach validation, then the lookup.
    expectConnectError(await refusedCalls[0]!(), 400, "invalid_argument", "validation_error", "channel");
    expectConnectError(await refusedCalls[1]!(), 400, "invalid_argument", "validation_error", "code");
    expectConnectError(await refusedCalls[2]!(), 404, "not_found", "user_not_found");
    const u = await newUser(key);
    const started = await start(u.id, key);
    expect(started.status, started.text).to.equal(200);
    expect(started.body.phone_verification).to.include({ status: "pending", livemode: true });
    expect((await updateProject({ id: projectId, live_phone_verification_enabled: false })).status).to.equal(200);
    expectConnectError(await latest(u.id, key), 403, "permission_denied", "live_feature_unavailable");
  });

  it("the bootstrapped Default project has both live settings on: its live key verifies phones and opens KYC sessions", async () => {
    const project = await call("svc.admin.v1.AdminService/GetProject", { id: svc.projectId }, svc.adminToken);
    expect(project.status, project.text).to.equal(200);
    expect(project.body.project).to.include({ name: "Default", live_phone_verification_enabled: true, live_kyc_enabled: true });
    const u = await newUser(svc.liveKey);
    expect((await start(u.id, svc.liveKey)).status).to.equal(200);
    const session = await call("KycSessionsService/CreateKycSession", { user_id: u.id }, svc.liveKey);
    expect(session.status, session.text).to.equal(200);
    expect(session.body.kyc_session).to.include({ status: "requires_input", livemode: true });
  });

  it("KYC sessions: create (Idempotency-Key replayed), get, list, cancel; live: 404 before feature_unavailable, lifted by UpdateProject", async () => {
    const u = await newUser();
    const idempotency = { "idempotency-key": `connect-json-kyc-${u.id}` };
    const body = { user_id: u.id, return_url: "https://app.example.com/done" };
    const created = await call("KycSessionsService/CreateKycSession", body, svc.sandboxKey, idempotency);
    expect(created.status, created.text).to.equal(200);
    const session = created.body.kyc_session;
    expect(session).to.include({
      user_id: u.id,
      status: "requires_input",
      return_url: body.return_url,
      url: `${svc.baseUrl}/dashboard/kyc/${session.id}`,
    });
    expect(Date.parse(session.expires_at)).to.equal(now + 24 * 60 * MINUTE);
    const replayed = await call("KycSessionsService/CreateKycSession", body, svc.sandboxKey, idempotency);
    expect(replayed.body).to.deep.equal(created.body);
    expect(replayed.headers.get("idempotent-replayed")).to.equal("true");
    expect(replayed.headers.get("x-request-id")).to.equal(created.headers.get("x-request-id"));
    expect((await call("KycSessionsService/GetKycSession", { id: session.id })).body).to.deep.equal(created.body);
    now += 1000;
    const second = (await call("KycSessionsService/CreateKycSession", { user_id: u.id })).body.kyc_session;
    const listed = await call("KycSessionsService/ListUserKycSessions", { user_id: u.id });
    expect(listed.body.data.map((s: { id: string; status: string }) => [s.id, s.status])).to.deep.equal([
      [second.id, "requires_input"],
      [session.id, "canceled"],
    ]);
    expect(listed.body).not.to.have.property("hasMore");
    const canceled = await call("KycSessionsService/CancelKycSession", { id: second.id });
    expect(canceled.body.kyc_session.status).to.equal("canceled");
    expectConnectError(await call("KycSessionsService/CancelKycSession", { id: second.id }), 400, "failed_precondition", "invalid_state");
    expectConnectError(
      await call("KycSessionsService/GetKycSession", { id: "kyc_000000000000000000000000" }),
      404,
      "not_found",
      "kyc_session_not_found",
    );
    expectConnectError(await call("KycSessionsService/CreateKycSession", { user_id: UNKNOWN_USER }), 404, "not_found", "user_not_found");

    const { projectId, key } = await liveKeyWithoutSettings();
    // The user is looked up before the setting.
    expectConnectError(await call("KycSessionsService/CreateKycSession", { user_id: UNKNOWN_USER }, key), 404, "not_found", "user_not_found");
    const liveUser = await newUser(key);
    const unavailable = await call("KycSessionsService/CreateKycSession", { user_id: liveUser.id }, key);
    expectConnectError(unavailable, 400, "failed_precondition", "feature_unavailable");
    const rest = await svc.request("POST", `/v1/users/${liveUser.id}/kyc-sessions`, { key, body: {} });
    expect(rest.body.error.code).to.equal("feature_unavailable");
    expect(unavailable.body.message, "the message is REST's").to.equal(rest.body.error.message);
    expect((await updateProject({ id: projectId, live_kyc_enabled: true })).body.project).to.include({ live_kyc_enabled: true });
    const opened = await call("KycSessionsService/CreateKycSession", { user_id: liveUser.id }, key);
    expect(opened.status, opened.text).to.equal(200);
    expect(opened.body.kyc_session).to.include({ livemode: true, url: `https://kyc.simulated.invalid/sessions/${opened.body.kyc_session.id}` });
  });

  it("sandbox drivers: submit, approve and reject; a live key is 403 permission_denied sandbox_only on each, before lookup and validation", async () => {
    const approvedUser = await newUser();
    const toApprove = (await call("KycSessionsService/CreateKycSession", { user_id: approvedUser.id })).body.kyc_session.id;
    expect((await call("SandboxService/SubmitKycSession", { id: toApprove })).body.kyc_session.status).to.equal("processing");
    expect((await call("SandboxService/ApproveKycSession", { id: toApprove })).body.kyc_session.status).to.equal("approved");
    expect((await call("UsersService/GetUser", { id: approvedUser.id })).body.user.kyc_status).to.equal("approved");
    expectConnectError(await call("SandboxService/SubmitKycSession", { id: toApprove }), 400, "failed_precondition", "invalid_state");

    const rejectedUser = await newUser();
    const toReject = (await call("KycSessionsService/CreateKycSession", { user_id: rejectedUser.id })).body.kyc_session.id;
    expectConnectError(
      await call("SandboxService/RejectKycSession", { id: toReject, reason: "" }),
      400,
      "invalid_argument",
      "validation_error",
      "reason",
    );
    const rejected = await call("SandboxService/RejectKycSession", { id: toReject, reason: "Document expired" });
    expect(rejected.body.kyc_session).to.include({ status: "rejected" });
    expect(rejected.body.kyc_session.last_error).to.deep.equal({ code: "verification_rejected", reason: "Document expired" });
    expect((await call("UsersService/GetUser", { id: rejectedUser.id })).body.user.kyc_status).to.equal("rejected");
    expectConnectError(
      await call("SandboxService/ApproveKycSession", { id: "kyc_000000000000000000000000" }),
      404,
      "not_found",
      "kyc_session_not_found",
    );

    for (const [method, body] of [
      ["SubmitKycSession", { id: toReject }],
      ["ApproveKycSession", { id: "nope" }],
      ["RejectKycSession", { id: "nope", reason: "" }],
    ] as const) {
      expectConnectError(await call(`SandboxService/${method}`, body, svc.liveKey), 403, "permission_denied", "sandbox_only");
    }
    // Nothing moved: the rejected session is as it was.
    expect((await call("KycSessionsService/GetKycSession", { id: toReject })).body.kyc_session.status).to.equal("rejected");
  });

  it("ListUsers: filters on kyc_status, verified, suspended and phone, combined; kyc_status and the cursor are refused", async () => {
    const tenant = await createOtherProject(svc);
    const decide = async (action: "approve" | "reject" | null): Promise<{ id: string; phone: string }> => {
      const u = await newUser(tenant.sandboxKey);
      now += 1000;
      if (action === null) return u;
      const session = (await call("KycSessionsService/CreateKycSession", { user_id: u.id }, tenant.sandboxKey)).body.kyc_session.id;
      const decided = await call(
        `SandboxService/${action === "approve" ? "ApproveKycSession" : "RejectKycSession"}`,
        { id: session },
        tenant.sandboxKey,
      );
      expect(decided.status, decided.text).to.equal(200);
      return u;
    };
    const approved = await decide("approve");
    const rejected = await decide("reject");
    const none = await decide(null);
    const pending = await newUser(tenant.sandboxKey);
    await call("KycSessionsService/CreateKycSession", { user_id: pending.id }, tenant.sandboxKey);
    await svc.admin.suspendUser({ projectId: tenant.projectId, livemode: false, userId: none.id });
    const liveUser = await newUser(tenant.liveKey);

    const ids = async (filter: Record<string, unknown>, key = tenant.sandboxKey): Promise<string[]> => {
      const listed = await call("UsersService/ListUsers", filter, key);
      expect(listed.status, listed.text).to.equal(200);
      // Protobuf JSON leaves an empty list out.
      const data: { id: string }[] = listed.body.data ?? [];
      for (const user of data) expect(user).to.have.property("kyc_status").and.not.to.have.property("profile");
      return data.map((u: { id: string }) => u.id);
    };
    expect(await ids({})).to.deep.equal([pending.id, none.id, rejected.id, approved.id]);
    expect(await ids({ kyc_status: "approved" })).to.deep.equal([approved.id]);
    expect(await ids({ kyc_status: "rejected" })).to.deep.equal([rejected.id]);
    expect(await ids({ kyc_status: "pending" })).to.deep.equal([pending.id]);
    expect(await ids({ kyc_status: "none", suspended: true })).to.deep.equal([none.id]);
    expect(await ids({ kyc_status: "none", suspended: false })).to.deep.equal([]);
    expect(await ids({ suspended: false, verified: true })).to.deep.equal([pending.id, rejected.id, approved.id]);
    expect(await ids({ phone: rejected.phone, kyc_status: "rejected" })).to.deep.equal([rejected.id]);
    expect(await ids({ phone: rejected.phone, kyc_status: "approved" })).to.deep.equal([]);
    expect(await ids({ verified: false }, tenant.liveKey)).to.deep.equal([liveUser.id]);
    const page = await call("UsersService/ListUsers", { limit: 2, suspended: false }, tenant.sandboxKey);
    expect(page.body.data.map((u: { id: string }) => u.id)).to.deep.equal([pending.id, rejected.id]);
    expect(page.body.has_more).to.equal(true);
    expectConnectError(
      await call("UsersService/ListUsers", { kyc_status: "verified" }, tenant.sandboxKey),
      400,
      "invalid_argument",
      "validation_error",
      "kyc_status",
    );
    // The filters are validated before the cursor is looked up; a user of another project is no cursor.
    expectConnectError(
      await call("UsersService/ListUsers", { kyc_status: "verified", starting_after: UNKNOWN_USER }, tenant.sandboxKey),
      400,
      "invalid_argument",
      "validation_error",
      "kyc_status",
    );
    expectConnectError(await call("UsersService/ListUsers", { starting_after: approved.id }), 400, "invalid_argument", "invalid_cursor");
  });
});
