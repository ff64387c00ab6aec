// KYC sessions (docs/contract.md, KYC sessions) over REST and a stock gRPC client: the object, the kyc_status
// mapping, replacement, expiry with the injected clock and the Agenda job, the sandbox drivers, the live
// provider and AdminService.RecordKycDecision, and kyc.* events delivered signed to a real receiver.
import { expect } from "chai";
import { bootstrapDefaultProject } from "../../src/bootstrap.ts";
import type { SimulatedKycProvider } from "../../src/identity/kyc-provider.ts";
import { verifyWebhookSignature } from "../../src/webhooks/verify-signature.ts";
import { expectError } from "../support/errors.ts";
import { bearer, grpc, GrpcTestClient } from "../support/grpc-client.ts";
import { uniquePhone } from "../support/phones.ts";
import { createKey, createProject } from "../support/tenancy.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { WebhookReceiver } from "../webhooks/support/receiver.ts";

const T0 = Date.parse("2026-11-22T08:00:00.000Z");
const DAY = 24 * 60 * 60 * 1000;

async function newUser(svc: TestService, key: string): Promise<string> {
  const created = await svc.request("POST", "/v1/users", { key, body: { phone: uniquePhone() } });
  expect(created.status, created.text).to.equal(201);
  return created.body.id;
}

describe("KYC sessions", function () {
  this.timeout(30_000);
  let svc: TestService;
  let now = T0;
  let rpc: GrpcTestClient;
  const kycStatusOf = async (id: string, key = svc.sandboxKey) => (await svc.request("GET", `/v1/users/${id}`, { key })).body.kyc_status;
  const createSession = (id: string, key = svc.sandboxKey, body: unknown = {}) => svc.request("POST", `/v1/users/${id}/kyc-sessions`, { key, body });
  const drive = (id: string, action: string, body: unknown = {}, key = svc.sandboxKey) =>
    svc.request("POST", `/v1/sandbox/kyc-sessions/${id}/${action}`, { key, body });

  before(async () => {
    svc = await startTestService({ clock: () => new Date(now) });
    rpc = new GrpcTestClient(svc.grpcAddress);
  });
  after(async () => {
    rpc.close();
    await svc.stop();
  });

  it("creates a session: 201 kyc_session, kyc_status pending, url on the service's own dashboard", async () => {
    const userId = await newUser(svc, svc.sandboxKey);
    const created = await createSession(userId, svc.sandboxKey, { return_url: "http://localhost:3000/done" });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.deep.equal({
      id: created.body.id,
      object: "kyc_session",
      user_id: userId,
      status: "requires_input",
      url: `${svc.baseUrl}/dashboard/kyc/${created.body.id}`,
      return_url: "http://localhost:3000/done",
      expires_at: new Date(now + DAY).toISOString(),
      last_error: null,
      livemode: false,
      created_at: new Date(now).toISOString(),
      updated_at: new Date(now).toISOString(),
    });
    expect(created.body.id).to.match(/^kyc_[A-Za-z0-9]{24}$/);
    expect(await kycStatusOf(userId)).to.equal("pending");
    const fetched = await svc.request("GET", `/v1/kyc-sessions/${created.body.id}`);
    expect(fetched.body).to.deep.equal(created.body);
  });

  it("replaces a session still requires_input, restores kyc_status on cancel, refuses moves from the wrong state", async () => {
    const userId = await newUser(svc, svc.sandboxKey);
    const first = (await createSession(userId)).body;
    now += 1000;
    const second = (await createSession(userId)).body;
    expect((await svc.request("GET", `/v1/kyc-sessions/${first.id}`)).body.status).to.equal("canceled");
    const list = await svc.request("GET", `/v1/users/${userId}/kyc-sessions`);
    expect(list.body.object).to.equal("list");
    expect(list.body.url).to.equal(`/v1/users/${userId}/kyc-sessions`);
    expect(list.body.data.map((s: any) => s.id)).to.deep.equal([second.id, first.id]);
    const page = await svc.request("GET", `/v1/users/${userId}/kyc-sessions?limit=1&starting_after=${second.id}`);
    expect(page.body.data.map((s: any) => s.id)).to.deep.equal([first.id]);
    expectError(await svc.request("GET", `/v1/users/${userId}/kyc-sessions?starting_after=kyc_nope`), 400, "invalid_request_error", "invalid_cursor");
    const canceled = await svc.request("POST", `/v1/kyc-sessions/${second.id}/cancel`, { body: {} });
    expect(canceled.status, canceled.text).to.equal(200);
    expect(canceled.body.status).to.equal("canceled");
    expect(await kycStatusOf(userId)).to.equal("none");
    expectError(await svc.request("POST", `/v1/kyc-sessions/${second.id}/cancel`, { body: {} }), 409, "invalid_request_error", "invalid_state");
    expectError(await drive(second.id, "approve"), 409, "invalid_request_error", "invalid_state");
  });

  it("maps decisions to kyc_status: submit keeps pending, reject -> rejected (last_error), a new session then approve -> approved", async () => {
    const userId = await newUser(svc, svc.sandboxKey);
    const session = (await createSession(userId)).body;
    const submitted = await drive(session.id, "submit");
    expect(submitted.body.status).to.equal("processing");
    expect(await kycStatusOf(userId)).to.equal("pending");
    expectError(await createSession(userId), 409, "invalid_request_error", "invalid_state");
    expectError(await svc.request("POST", `/v1/kyc-sessions/${session.id}/cancel`, { body: {} }), 409, "invalid_request_error", "invalid_state");
    expectError(await drive(session.id, "submit"), 409, "invalid_request_error", "invalid_state");
    const rejected = await drive(session.id, "reject", { reason: "Document unreadable" });
    expect(rejected.body.status).to.equal("rejected");
    expect(rejected.body.last_error).to.deep.equal({ code: "verification_rejected", reason: "Document unreadable" });
    expect(await kycStatusOf(userId)).to.equal("rejected");
    const retry = (await createSession(userId)).body;
    expect(await kycStatusOf(userId)).to.equal("pending");
    // Cancelling the retry restores the rejection it replaced.
    await svc.request("POST", `/v1/kyc-sessions/${retry.id}/cancel`, { body: {} });
    expect(await kycStatusOf(userId)).to.equal("rejected");
    now += 1000;
    const last = (await createSession(userId)).body;
    expect((await drive(last.id, "approve")).body.status).to.equal("approved");
    expect(await kycStatusOf(userId)).to.equal("approved");
    expectError(await createSession(userId), 409, "invalid_request_error", "invalid_state");
    const events = await svc.request("GET", "/v1/events?limit=100");
    const mine = events.body.data.filter((e: any) => e.type.startsWith("kyc.") && e.data.object.user_id === userId);
    expect(mine.map((e: any) => [e.type, e.data.object.status])).to.deep.equal([
      ["kyc.approved", "approved"],
      ["kyc.rejected", "rejected"],
    ]);
    const users = await svc.request("GET", `/v1/users?kyc_status=approved&limit=100`);
    expect(users.body.data.map((u: any) => u.id)).to.include(userId);
  });

  it("expires a session still requires_input after 24 h, restoring kyc_status (reads and the Agenda job alike)", async () => {
    const userId = await newUser(svc, svc.sandboxKey);
    const session = (await createSession(userId)).body;
    now += DAY - 1;
    expect((await svc.request("GET", `/v1/kyc-sessions/${session.id}`)).body.status).to.equal("requires_input");
    now += 1;
    const expired = await svc.request("GET", `/v1/kyc-sessions/${session.id}`);
    expect(expired.body.status).to.equal("expired");
    expect(await kycStatusOf(userId)).to.equal("none");
    expectError(await drive(session.id, "approve"), 409, "invalid_request_error", "invalid_state");
    // The job scheduled for the session settles it without any read.
    const other = await newUser(svc, svc.sandboxKey);
    const pending = (await createSession(other)).body;
    const job = await svc.database.db.collection("jobs").findOne({ name: "expire-kyc-session", "data.sessionId": pending.id });
    expect(job, "the expiry job").to.exist;
    expect((job!.nextRunAt as Date).toISOString()).to.equal(pending.expires_at);
    now += DAY;
    await svc.database.db.collection("jobs").updateOne({ _id: job!._id }, { $set: { nextRunAt: new Date(Date.now() - 1000) } });
    const deadline = Date.now() + 10_000;
    let stored: any = null;
    while (Date.now() < deadline) {
      stored = await svc.database.db.collection("users").findOne({ _id: other as never });
      if (stored.kyc_status === "none") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(stored.kyc_status).to.equal("none");
    expect(stored.kyc_sessions[0].status).to.equal("expired");
  });

  it("refuses in the documented order: validation, 404, feature_unavailable, user_suspended", async () => {
    expectError(
      await createSession("999999999", svc.sandboxKey, { return_url: "ftp://x" }),
      422,
      "invalid_request_error",
      "validation_error",
      "return_url",
    );
    expectError(
      await createSession("999999999", svc.liveKey, { return_url: "http://example.com/back" }),
      422,
      "invalid_request_error",
      "validation_error",
      "return_url",
    );
    expectError(await createSession("999999999"), 404, "invalid_request_error", "user_not_found");
    expectError(await svc.request("GET", "/v1/kyc-sessions/kyc_000000000000000000000000"), 404, "invalid_request_error", "kyc_session_not_found");
    expectError(await svc.request("GET", "/v1/kyc-sessions/nope"), 404, "invalid_request_error", "kyc_session_not_found");
    expectError(await svc.request("POST", "/v1/kyc-sessions/nope/cancel", { body: {} }), 404, "invalid_request_error", "kyc_session_not_found");
    expectError(await drive("kyc_000000000000000000000000", "submit"), 404, "invalid_request_error", "kyc_session_not_found");
    expectError(await svc.request("GET", "/v1/users/999999999/kyc-sessions"), 404, "invalid_request_error", "user_not_found");
    const project = await createProject(svc, { liveEnabled: true });
    const live = (await createKey(svc, project.projectId, { livemode: true })).secret;
    expectError(await createSession("999999999", live), 404, "invalid_request_error", "user_not_found");
    const liveUser = await newUser(svc, live);
    expectError(await createSession(liveUser, live), 409, "invalid_request_error", "feature_unavailable");
    // The setting lifts the refusal at once (a change made through this process clears the settings cache).
    await svc.admin.updateProject({ id: project.projectId, liveKycEnabled: true });
    const opened = await createSession(liveUser, live);
    expect(opened.status, opened.text).to.equal(201);
    expect(opened.body.livemode).to.equal(true);
    await svc.admin.updateProject({ id: project.projectId, liveKycEnabled: false });
    expectError(await createSession(await newUser(svc, live), live), 409, "invalid_request_error", "feature_unavailable");
    const suspended = await newUser(svc, svc.sandboxKey);
    await svc.admin.suspendUser({ projectId: svc.projectId, livemode: false, userId: suspended });
    expectError(await createSession(suspended), 409, "invalid_request_error", "user_suspended");
    // Another tenant's session does not exist for this key.
    const mine = (await createSession(await newUser(svc, svc.sandboxKey))).body;
    const otherKey = (await createKey(svc, project.projectId)).secret;
    expectError(await svc.request("GET", `/v1/kyc-sessions/${mine.id}`, { key: otherKey }), 404, "invalid_request_error", "kyc_session_not_found");
  });

  it("answers 403 sandbox_only to any live key on every /v1/sandbox route, before any lookup or validation", async () => {
    for (const action of ["submit", "approve", "reject"]) {
      expectError(await drive("nope", action, { bogus: 1 }, svc.liveKey), 403, "permission_error", "sandbox_only");
      expectError(
        await svc.request("POST", `/v1/sandbox/kyc-sessions/nope/${action}`, { key: svc.liveKey, rawBody: "{" }),
        403,
        "permission_error",
        "sandbox_only",
      );
    }
    expectError(await drive("nope", "reject", { reason: "" }), 422, "invalid_request_error", "validation_error", "reason");
  });

  it("live: opens the session at the provider (503 when it fails), decisions come through AdminService.RecordKycDecision", async () => {
    const provider = svc.app.kycProvider as SimulatedKycProvider;
    const userId = await newUser(svc, svc.liveKey);
    provider.failNext(1);
    const failed = await createSession(userId, svc.liveKey);
    expectError(failed, 503, "api_error", "kyc_session_unavailable");
    expect(failed.headers.get("retry-after")).to.equal("30");
    expect(await kycStatusOf(userId, svc.liveKey)).to.equal("none");
    const session = await createSession(userId, svc.liveKey, { return_url: "https://example.com/back" });
    expect(session.status, session.text).to.equal(201);
    expect(session.body.url).to.equal(`https://kyc.simulated.invalid/sessions/${session.body.id}`);
    expect(session.body.livemode).to.equal(true);
    const decided = await svc.admin.recordKycDecision({ sessionId: session.body.id, decision: "rejected", reason: "Mismatch" });
    expect(decided.kycSession!.status).to.equal("rejected");
    expect(await kycStatusOf(userId, svc.liveKey)).to.equal("rejected");
    let refusal: unknown = null;
    try {
      await svc.admin.recordKycDecision({ sessionId: session.body.id, decision: "approved" });
    } catch (error) {
      refusal = error;
    }
    expect(String(refusal)).to.contain("cannot be approved");
    for (const bad of [
      { sessionId: session.body.id, decision: "maybe" },
      { sessionId: "kyc_000000000000000000000000", decision: "approved" },
    ]) {
      let error: unknown = null;
      try {
        await svc.admin.recordKycDecision(bad);
      } catch (e) {
        error = e;
      }
      expect(error, JSON.stringify(bad)).to.exist;
    }
  });

  it("answers the same codes over a stock gRPC client", async () => {
    const sandbox = bearer(svc.sandboxKey);
    await rpc.fails("SandboxService", "ApproveKycSession", { id: "nope" }, bearer(svc.liveKey), {
      code: grpc.status.PERMISSION_DENIED,
      reason: "sandbox_only",
    });
    await rpc.fails("KycSessionsService", "GetKycSession", { id: "nope" }, sandbox, { code: grpc.status.NOT_FOUND, reason: "kyc_session_not_found" });
    await rpc.fails("KycSessionsService", "CreateKycSession", { user_id: "999999999" }, sandbox, {
      code: grpc.status.NOT_FOUND,
      reason: "user_not_found",
    });
    await rpc.fails("KycSessionsService", "CreateKycSession", { user_id: "999999999", return_url: "nope" }, sandbox, {
      code: grpc.status.INVALID_ARGUMENT,
      reason: "validation_error",
      param: "return_url",
    });
    const userId = await newUser(svc, svc.sandboxKey);
    const created = await rpc.ok("KycSessionsService", "CreateKycSession", { user_id: userId }, { ...sandbox, "idempotency-key": `kyc-${userId}` });
    const id = created.message.kyc_session.id;
    const replay = await rpc.ok("KycSessionsService", "CreateKycSession", { user_id: userId }, { ...sandbox, "idempotency-key": `kyc-${userId}` });
    expect(replay.message.kyc_session.id).to.equal(id);
    await rpc.ok("SandboxService", "SubmitKycSession", { id }, sandbox);
    await rpc.fails("KycSessionsService", "CancelKycSession", { id }, sandbox, { code: grpc.status.FAILED_PRECONDITION, reason: "invalid_state" });
    await rpc.fails("KycSessionsService", "CreateKycSession", { user_id: userId }, sandbox, {
      code: grpc.status.FAILED_PRECONDITION,
      reason: "invalid_state",
    });
    const approved = await rpc.ok("SandboxService", "ApproveKycSession", { id }, sandbox);
    expect(approved.message.kyc_session.status).to.equal("approved");
    const listed = await rpc.ok("KycSessionsService", "ListUserKycSessions", { user_id: userId }, sandbox);
    expect(listed.message.data.map((s: any) => s.id)).to.deep.equal([id]);
    const project = await createProject(svc, { liveEnabled: true });
    const live = (await createKey(svc, project.projectId, { livemode: true })).secret;
    // The user is looked up before the setting: an unknown user is 404 even where live KYC is off.
    await rpc.fails("KycSessionsService", "CreateKycSession", { user_id: "999999999" }, bearer(live), {
      code: grpc.status.NOT_FOUND,
      reason: "user_not_found",
    });
    const liveUser = await newUser(svc, live);
    await rpc.fails("KycSessionsService", "CreateKycSession", { user_id: liveUser }, bearer(live), {
      code: grpc.status.FAILED_PRECONDITION,
      reason: "feature_unavailable",
    });
    const suspended = await newUser(svc, svc.sandboxKey);
    await svc.admin.suspendUser({ projectId: svc.projectId, livemode: false, userId: suspended });
    await rpc.fails("KycSessionsService", "CreateKycSession", { user_id: suspended }, sandbox, {
      code: grpc.status.FAILED_PRECONDITION,
      reason: "user_suspended",
    });
    const provider = svc.app.kycProvider as SimulatedKycProvider;
    provider.failNext(1);
    await rpc.fails("KycSessionsService", "CreateKycSession", { user_id: await newUser(svc, svc.liveKey) }, bearer(svc.liveKey), {
      code: grpc.status.UNAVAILABLE,
      reason: "kyc_session_unavailable",
    });
  });
});

describe("the bootstrapped Default project", () => {
  it("has live phone verification and live KYC on, also when it was made before those settings existed", async () => {
    const svc = await startTestService();
    try {
      const { project } = await svc.admin.getProject({ id: svc.projectId });
      expect([project!.livePhoneVerificationEnabled, project!.liveKycEnabled]).to.deep.equal([true, true]);
      await svc.database.db
        .collection<{ _id: string }>("projects")
        .updateOne({ _id: svc.projectId }, { $unset: { live_phone_verification_enabled: "", live_kyc_enabled: "" } });
      const again = await bootstrapDefaultProject({ tenancy: svc.app.tenancy, ...svc.app.repositories }, {});
      expect(again.projectId).to.equal(svc.projectId);
      const { project: upgraded } = await svc.admin.getProject({ id: svc.projectId });
      expect([upgraded!.livePhoneVerificationEnabled, upgraded!.liveKycEnabled]).to.deep.equal([true, true]);
    } finally {
      await svc.stop();
    }
  });
});

describe("KYC events to a real receiver", function () {
  this.timeout(30_000);
  let svc: TestService;
  let receiver: WebhookReceiver;
  before(async () => {
    svc = await startTestService();
    receiver = await WebhookReceiver.start();
  });
  after(async () => {
    await receiver.close();
    await svc.stop();
  });

  it("delivers kyc.approved and kyc.rejected signed, each once, with data.object matching the user afterwards", async () => {
    const endpoint = await svc.request("POST", "/v1/webhook-endpoints", {
      body: { url: receiver.url(), event_types: ["kyc.approved", "kyc.rejected"] },
    });
    expect(endpoint.status, endpoint.text).to.equal(201);
    const secret = endpoint.body.secret as string;
    for (const [action, type, status] of [
      ["approve", "kyc.approved", "approved"],
      ["reject", "kyc.rejected", "rejected"],
    ] as const) {
      const userId = await newUser(svc, svc.sandboxKey);
      const session = (await svc.request("POST", `/v1/users/${userId}/kyc-sessions`, { body: {} })).body;
      await svc.request("POST", `/v1/sandbox/kyc-sessions/${session.id}/submit`, { body: {} });
      const decided = await svc.request("POST", `/v1/sandbox/kyc-sessions/${session.id}/${action}`, { body: {} });
      expect(decided.status, decided.text).to.equal(200);
      const forUser = (r: typeof receiver.received) => r.filter((w) => w.body?.data?.object?.user_id === userId);
      await receiver.waitUntil((r) => forUser(r).length >= 1);
      await new Promise((r) => setTimeout(r, 300));
      const got = forUser(receiver.received);
      expect(got).to.have.length(1);
      const webhook = got[0]!;
      expect(verifyWebhookSignature(Buffer.from(webhook.rawBody), webhook.headers["svc-signature"] as string, secret)).to.equal(true);
      expect(webhook.body.type).to.equal(type);
      expect(webhook.headers["svc-event-type"]).to.equal(type);
      const user = (await svc.request("GET", `/v1/users/${userId}`)).body;
      expect(webhook.body.data.object).to.deep.equal({ object: "kyc", user_id: user.id, status: user.kyc_status, livemode: user.livemode });
      expect(user.kyc_status).to.equal(status);
    }
  });
});
