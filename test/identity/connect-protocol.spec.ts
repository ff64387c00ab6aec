// The identity methods over the Connect protocol (JSON over HTTP/1.1 on PORT, as connect-es and browsers call them):
// the same objects and the same codes in the same order as REST, each refusal's Svc code in its ErrorInfo.
import { Code, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import type { DescService } from "@bufbuild/protobuf";
import { expect } from "chai";
import { KycSessionsService, PhoneVerificationService, SandboxService } from "../../gen/svc/v1/identity_pb.ts";
import { UsersService } from "../../gen/svc/v1/users_pb.ts";
import { rpcErrorOf } from "../support/errors.ts";
import { uniquePhone, uniquePhoneEnding } from "../support/phones.ts";
import { createKey, createProject } from "../support/tenancy.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

describe("identity over the Connect protocol", function () {
  this.timeout(30_000);
  let svc: TestService;
  let now = Date.parse("2026-11-22T08:00:00.000Z");
  function connect<S extends DescService>(service: S, key: string): Client<S> {
    const auth: Interceptor = (next) => (request) => {
      request.header.set("authorization", `Bearer ${key}`);
      return next(request);
    };
    return createClient(service, createConnectTransport({ baseUrl: svc.baseUrl, httpVersion: "1.1", interceptors: [auth] }));
  }

  before(async () => {
    svc = await startTestService({ clock: () => new Date(now) });
  });
  after(async () => {
    await svc.stop();
  });

  it("phone verification: start, check, latest, and the refusals in their order", async () => {
    const users = connect(UsersService, svc.sandboxKey);
    const verification = connect(PhoneVerificationService, svc.sandboxKey);
    const { user } = await users.createUser({ phone: uniquePhone() });
    expect(await rpcErrorOf(verification.getPhoneVerification({ userId: user!.id }))).to.deep.equal({
      code: Code.FailedPrecondition,
      reason: "no_pending_verification",
      param: undefined,
    });
    const started = await verification.startPhoneVerification({ userId: user!.id });
    expect([started.phoneVerification!.status, started.phoneVerification!.attemptsRemaining]).to.deep.equal(["pending", 5]);
    expect(await rpcErrorOf(verification.checkPhoneVerification({ userId: user!.id, code: "12345" }))).to.deep.equal({
      code: Code.InvalidArgument,
      reason: "validation_error",
      param: "code",
    });
    expect((await rpcErrorOf(verification.checkPhoneVerification({ userId: user!.id, code: "111111" }))).reason).to.equal(
      "invalid_verification_code",
    );
    const checked = await verification.checkPhoneVerification({ userId: user!.id, code: "000000" });
    expect([checked.phoneVerification!.status, checked.phoneVerification!.attemptsRemaining]).to.deep.equal(["approved", 4]);
    const latest = await verification.getPhoneVerification({ userId: user!.id });
    expect(latest.phoneVerification!.status).to.equal("approved");
    expect(await rpcErrorOf(verification.startPhoneVerification({ userId: "999999999" }))).to.deep.equal({
      code: Code.NotFound,
      reason: "user_not_found",
      param: undefined,
    });
    const { user: unreachable } = await users.createUser({ phone: uniquePhoneEnding("0503") });
    expect((await rpcErrorOf(verification.startPhoneVerification({ userId: unreachable!.id }))).code).to.equal(Code.Unavailable);

    const project = await createProject(svc, { liveEnabled: true });
    const live = connect(PhoneVerificationService, (await createKey(svc, project.projectId, { livemode: true })).secret);
    expect(await rpcErrorOf(live.checkPhoneVerification({ userId: "999999999", code: "x" }))).to.deep.equal({
      code: Code.PermissionDenied,
      reason: "live_feature_unavailable",
      param: undefined,
    });
  });

  it("KYC sessions: create (Idempotency-Key), get, list, cancel; 404 before feature_unavailable", async () => {
    const users = connect(UsersService, svc.sandboxKey);
    const kyc = connect(KycSessionsService, svc.sandboxKey);
    const { user } = await users.createUser({ phone: uniquePhone() });
    const headers = { "idempotency-key": `connect-kyc-${user!.id}` };
    const created = await kyc.createKycSession({ userId: user!.id, returnUrl: "https://app.example.com/done" }, { headers });
    const replayed = await kyc.createKycSession({ userId: user!.id, returnUrl: "https://app.example.com/done" }, { headers });
    expect(replayed.kycSession!.id).to.equal(created.kycSession!.id);
    expect(created.kycSession!.status).to.equal("requires_input");
    expect((await kyc.getKycSession({ id: created.kycSession!.id })).kycSession!.userId).to.equal(user!.id);
    const second = await kyc.createKycSession({ userId: user!.id });
    const listed = await kyc.listUserKycSessions({ userId: user!.id });
    expect(listed.data.map((s) => [s.id, s.status])).to.deep.equal([
      [second.kycSession!.id, "requires_input"],
      [created.kycSession!.id, "canceled"],
    ]);
    expect((await kyc.cancelKycSession({ id: second.kycSession!.id })).kycSession!.status).to.equal("canceled");
    expect(await rpcErrorOf(kyc.cancelKycSession({ id: second.kycSession!.id }))).to.deep.equal({
      code: Code.FailedPrecondition,
      reason: "invalid_state",
      param: undefined,
    });
    expect(await rpcErrorOf(kyc.getKycSession({ id: "kyc_000000000000000000000000" }))).to.deep.equal({
      code: Code.NotFound,
      reason: "kyc_session_not_found",
      param: undefined,
    });
    expect(await rpcErrorOf(kyc.createKycSession({ userId: user!.id, returnUrl: "ftp://x" }))).to.deep.equal({
      code: Code.InvalidArgument,
      reason: "validation_error",
      param: "return_url",
    });

    const project = await createProject(svc, { liveEnabled: true });
    const liveKey = (await createKey(svc, project.projectId, { livemode: true })).secret;
    const liveKyc = connect(KycSessionsService, liveKey);
    expect((await rpcErrorOf(liveKyc.createKycSession({ userId: "999999999" }))).reason).to.equal("user_not_found");
    const { user: liveUser } = await connect(UsersService, liveKey).createUser({ phone: uniquePhone() });
    expect(await rpcErrorOf(liveKyc.createKycSession({ userId: liveUser!.id }))).to.deep.equal({
      code: Code.FailedPrecondition,
      reason: "feature_unavailable",
      param: undefined,
    });
  });

  it("sandbox drivers: submit, approve, reject; a live key is permission_denied sandbox_only before any lookup", async () => {
    const users = connect(UsersService, svc.sandboxKey);
    const kyc = connect(KycSessionsService, svc.sandboxKey);
    const sandbox = connect(SandboxService, svc.sandboxKey);
    const { user } = await users.createUser({ phone: uniquePhone() });
    const { kycSession } = await kyc.createKycSession({ userId: user!.id });
    expect((await sandbox.submitKycSession({ id: kycSession!.id })).kycSession!.status).to.equal("processing");
    expect((await sandbox.approveKycSession({ id: kycSession!.id })).kycSession!.status).to.equal("approved");
    expect((await users.getUser({ id: user!.id })).user!.kycStatus).to.equal("approved");
    const { user: other } = await users.createUser({ phone: uniquePhone() });
    const { kycSession: doomed } = await kyc.createKycSession({ userId: other!.id });
    const rejected = await sandbox.rejectKycSession({ id: doomed!.id, reason: "Document expired" });
    expect([rejected.kycSession!.status, rejected.kycSession!.lastError?.reason]).to.deep.equal(["rejected", "Document expired"]);
    expect(await rpcErrorOf(sandbox.rejectKycSession({ id: doomed!.id, reason: "" }))).to.deep.equal({
      code: Code.InvalidArgument,
      reason: "validation_error",
      param: "reason",
    });
    expect(await rpcErrorOf(connect(SandboxService, svc.liveKey).approveKycSession({ id: "nope" }))).to.deep.equal({
      code: Code.PermissionDenied,
      reason: "sandbox_only",
      param: undefined,
    });
  });

  it("ListUsers: newest first, paged, filtered by external_id; a bad kyc_status is invalid_argument", async () => {
    const users = connect(UsersService, svc.sandboxKey);
    const externalId = `connect-list-${now}`;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      now += 1000;
      ids.push((await users.createUser({ phone: uniquePhone(), ...(i === 1 ? { externalId } : {}), firstName: "Ada" })).user!.id);
    }
    const page = await users.listUsers({ limit: 2 });
    expect(page.data.map((u) => u.id)).to.deep.equal([ids[2], ids[1]]);
    expect(page.hasMore).to.equal(true);
    const found = await users.listUsers({ externalId });
    expect(found.data.map((u) => u.id)).to.deep.equal([ids[1]]);
    expect(await rpcErrorOf(users.listUsers({ kycStatus: "maybe" }))).to.deep.equal({
      code: Code.InvalidArgument,
      reason: "validation_error",
      param: "kyc_status",
    });
  });
});
